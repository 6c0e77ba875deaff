#include "headroom/models/node_gat.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "headroom/models/node_model_kind.hpp"
#include "headroom/nn/fused_gat.hpp"

namespace headroom::models {
namespace {

constexpr double kNegativeSlope = 0.2;  // GAT's LeakyReLU

// PyG's glorot over the last two dimensions (as nn::GATConv initialises its own).
at::Tensor glorot(at::IntArrayRef shape) {
  const auto fan_sum = shape[shape.size() - 2] + shape[shape.size() - 1];
  const double limit = std::sqrt(6.0 / static_cast<double>(fan_sum));
  return torch::empty(shape).uniform_(-limit, limit);
}

}  // namespace

nn::AttentionGraph attention_graph_of(const nn::SparseAdjacency& adjacency) {
  const auto& offsets = adjacency.row_offsets();
  const auto nodes = adjacency.num_nodes();
  const auto per_row = offsets.slice(0, 1) - offsets.slice(0, 0, nodes);
  const auto targets = torch::repeat_interleave(torch::arange(nodes, offsets.options()), per_row,
                                                /*dim=*/std::nullopt, adjacency.num_entries());
  return nn::build_attention_graph(torch::stack({adjacency.columns().to(torch::kInt64), targets}),
                                   nodes);
}

RowNeighbourhood row_neighbourhood(const nn::SparseAdjacency& adjacency, const at::Tensor& rows,
                                   const c10::Device& device) {
  const auto offsets = adjacency.row_offsets().cpu();
  const auto columns = adjacency.columns().cpu();
  const auto* begin_of = offsets.data_ptr<std::int64_t>();
  const auto* column = columns.data_ptr<std::int32_t>();
  const auto listed = rows.to(torch::kCPU, torch::kInt64).contiguous();
  const auto* row = listed.data_ptr<std::int64_t>();
  const auto count = listed.numel();
  const auto nodes = adjacency.num_nodes();

  std::vector<std::int64_t> local(static_cast<std::size_t>(nodes), -1);
  std::vector<std::int64_t> order;
  order.reserve(static_cast<std::size_t>(count));
  for (std::int64_t k = 0; k < count; ++k) {
    if (row[k] < 0 || row[k] >= nodes || local[static_cast<std::size_t>(row[k])] >= 0)
      throw std::invalid_argument("row_neighbourhood: rows must be distinct node ids in [0, N)");
    local[static_cast<std::size_t>(row[k])] = k;
    order.push_back(row[k]);
  }
  std::vector<std::int64_t> sources;
  std::vector<std::int64_t> targets;
  for (std::int64_t k = 0; k < count; ++k) {
    for (auto e = begin_of[row[k]]; e < begin_of[row[k] + 1]; ++e) {
      auto& id = local[static_cast<std::size_t>(column[e])];
      if (id < 0) {
        id = static_cast<std::int64_t>(order.size());
        order.push_back(column[e]);
      }
      sources.push_back(id);
      targets.push_back(k);
    }
  }
  const auto edges = static_cast<std::int64_t>(sources.size());
  auto edge_index = torch::empty({2, edges}, torch::kInt64);
  std::copy(sources.begin(), sources.end(), edge_index.data_ptr<std::int64_t>());
  std::copy(targets.begin(), targets.end(), edge_index.data_ptr<std::int64_t>() + edges);
  RowNeighbourhood result;
  result.rows = count;
  result.nodes = torch::tensor(order, torch::kInt64);
  result.graph =
      nn::build_attention_graph(edge_index.to(device), static_cast<std::int64_t>(order.size()));
  return result;
}

NodeGatImpl::NodeGatImpl(const NodeModelConfig& config) : NodeModelImpl(config) {
  if (config_.architecture != "gat")
    throw std::invalid_argument("node GAT: the configuration names another architecture");
  const auto heads = config_.heads;
  const auto channels = config_.hidden;
  // W1 as nn::GATConv's weight would be for an identity input: glorot over (N, heads × hidden).
  identity_weight =
      register_parameter("identity_weight", glorot({config_.num_nodes, heads * channels}));
  att_src = register_parameter("att_src", glorot({1, heads, channels}));
  att_dst = register_parameter("att_dst", glorot({1, heads, channels}));
  hidden_bias = register_parameter("hidden_bias", torch::zeros({heads * channels}));
  output = register_module("output", nn::GATConv(nn::GATConvOptions{
                                         .in_channels = heads * channels,
                                         .out_channels = config_.num_classes,
                                         .heads = 1,
                                         .negative_slope = kNegativeSlope,
                                         .dropout = config_.dropout,
                                     }));
}

at::Tensor NodeGatImpl::hidden_layer(const at::Tensor& projected, const nn::AttentionGraph& graph) {
  const auto nodes = projected.size(0);
  const auto h = projected.view({nodes, config_.heads, config_.hidden});
  // Per-head scores a · h: an n × heads × hidden temporary, the width of the layer's own output.
  const auto alpha_src = (h * att_src).sum(-1);
  const auto alpha_dst = (h * att_dst).sum(-1);
  at::Tensor dropout_scale;
  if (is_training() && config_.dropout > 0)
    dropout_scale =
        nn::attention_dropout_scale(graph, config_.heads, config_.dropout, h.scalar_type());
  const auto attended =
      nn::fused_gat_attention(h, alpha_src, alpha_dst, graph, kNegativeSlope, dropout_scale).out;
  return torch::elu(attended.reshape({nodes, config_.hidden_width()}) + hidden_bias);
}

at::Tensor NodeGatImpl::both_layers(const at::Tensor& projected, const nn::AttentionGraph& graph) {
  auto hidden = hidden_layer(projected, graph);
  hidden = torch::dropout(hidden, config_.dropout, is_training());
  return output->forward(hidden, graph);
}

at::Tensor NodeGatImpl::forward(const nn::SparseAdjacency& adjacency) {
  if (memo_.adjacency != &adjacency || memo_.entries != adjacency.num_entries() ||
      !memo_.graph.target_offsets.defined())
    memo_ = {&adjacency, adjacency.num_entries(), attention_graph_of(adjacency)};
  return both_layers(identity_weight, memo_.graph);
}

at::Tensor NodeGatImpl::forward_on(const nn::SparseAdjacency& subgraph,
                                   const at::Tensor& node_ids) {
  if (node_ids.dim() != 1 || node_ids.numel() != subgraph.num_nodes())
    throw std::invalid_argument("node GAT: one node id per subgraph node is needed");
  return both_layers(identity_weight.index_select(0, node_ids), attention_graph_of(subgraph));
}

at::Tensor NodeGatImpl::hidden_rows(const nn::SparseAdjacency& adjacency, const at::Tensor& rows,
                                    const InferenceBlocks& blocks) {
  const auto device = identity_weight.device();
  const auto offsets = adjacency.row_offsets().cpu();
  const auto count = rows.numel();
  auto hidden = torch::empty({count, config_.hidden_width()}, identity_weight.options());
  for (std::int64_t first = 0; first < count;) {
    const auto end = inference_block_end(offsets.data_ptr<std::int64_t>(),
                                         rows.data_ptr<std::int64_t>(), first, count, blocks);
    const auto block = row_neighbourhood(adjacency, rows.slice(0, first, end), device);
    const auto projected = identity_weight.index_select(0, block.nodes.to(device));
    hidden.slice(0, first, end)
        .copy_(hidden_layer(projected, block.graph).narrow(0, 0, end - first));
    first = end;
  }
  return hidden;
}

at::Tensor NodeGatImpl::output_rows(const nn::SparseAdjacency& adjacency, const at::Tensor& rows,
                                    const at::Tensor& hidden, const InferenceBlocks& blocks) {
  const auto device = identity_weight.device();
  const auto offsets = adjacency.row_offsets().cpu();
  const auto count = rows.numel();
  auto logits = torch::empty({count, config_.num_classes}, identity_weight.options());
  for (std::int64_t first = 0; first < count;) {
    const auto end = inference_block_end(offsets.data_ptr<std::int64_t>(),
                                         rows.data_ptr<std::int64_t>(), first, count, blocks);
    const auto block = row_neighbourhood(adjacency, rows.slice(0, first, end), device);
    // The block's sources' hidden rows: the whole graph's, or computed here for them alone.
    const auto inputs = hidden.defined() ? hidden.index_select(0, block.nodes.to(device))
                                         : hidden_rows(adjacency, block.nodes, blocks);
    logits.slice(0, first, end)
        .copy_(output->forward(inputs, block.graph).narrow(0, 0, end - first));
    first = end;
  }
  return logits;
}

at::Tensor NodeGatImpl::infer_by_row_blocks(const nn::SparseAdjacency& adjacency,
                                            const InferenceBlocks& blocks) {
  require_inference("inference by row blocks", blocks);
  const auto all = torch::arange(adjacency.num_nodes(), torch::kInt64);
  return output_rows(adjacency, all, hidden_rows(adjacency, all, blocks), blocks);
}

at::Tensor NodeGatImpl::infer_rows(const nn::SparseAdjacency& adjacency, const at::Tensor& rows,
                                   const InferenceBlocks& blocks) {
  require_inference("inference of listed rows", blocks);
  // Each block of rows computes the hidden rows of its own neighbourhood: a few thousand
  // documents read a part of the graph, and no N-row tensor is made.
  return output_rows(adjacency, rows.to(torch::kCPU, torch::kInt64).contiguous(), {}, blocks);
}

namespace kinds {
namespace {

// Veličković et al.'s citation graphs' first layer: 8 heads of 8 channels.
constexpr std::int64_t kHeads = 8;
constexpr std::int64_t kChannelsPerHead = 8;

class GatNodeModel final : public NodeModelKind {
 public:
  std::string_view name() const override { return "gat"; }
  std::string_view summary() const override { return "8 heads × 8 channels"; }
  double default_learning_rate() const override { return 0.02; }  // the node task's (TextGCN's)
  bool reads_option(std::string_view option) const override {
    return option == "hidden" || option == "heads" || option == "dropout";
  }
  NodeModelConfig configure(std::int64_t num_nodes, std::int64_t num_classes,
                            const NodeModelOverrides& given) const override {
    return {.num_nodes = num_nodes,
            .hidden = given.hidden.value_or(kChannelsPerHead),
            .num_classes = num_classes,
            .dropout = given.dropout.value_or(0.5),
            .architecture = std::string(name()),
            .heads = given.heads.value_or(kHeads)};
  }
  void validate(const NodeModelConfig& config) const override {
    if (config.layers != 2)
      throw std::invalid_argument("node gat: the node GAT has two layers (layers must be 2)");
  }
  std::int64_t parameter_count(const NodeModelConfig& config) const override {
    // W1, its attention vectors and bias; W2, its attention vectors and bias.
    const auto width = config.hidden_width();
    const auto classes = config.num_classes;
    return config.num_nodes * width + 3 * width + width * classes + 3 * classes;
  }
  bool cost_grows_with_entries() const override { return true; }  // attention per entry
  std::string describe(const NodeModelConfig& config) const override {
    return fmt::format("GAT ({} heads × {} channels, dropout {})", config.heads, config.hidden,
                       config.dropout);
  }
  NodeModel build(const NodeModelConfig& config) const override {
    return std::make_shared<NodeGatImpl>(config);
  }
};

}  // namespace

const NodeModelKind& gat_node_model() {
  static const GatNodeModel kind;
  return kind;
}

}  // namespace kinds
}  // namespace headroom::models
