#include "headroom/models/node_gcn.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "headroom/models/node_model_kind.hpp"

namespace headroom::models {
namespace {

// Glorot (Xavier) uniform, as TextGCN initialises both weights.
at::Tensor glorot(std::int64_t rows, std::int64_t columns) {
  const double limit = std::sqrt(6.0 / static_cast<double>(rows + columns));
  return torch::empty({rows, columns}).uniform_(-limit, limit);
}

}  // namespace

NodeGcnImpl::NodeGcnImpl(const NodeModelConfig& config) : NodeModelImpl(config) {
  if (config_.architecture != "gcn")
    throw std::invalid_argument("node GCN: the configuration names another architecture");
  identity_weight =
      register_parameter("identity_weight", glorot(config_.num_nodes, config_.hidden));
  output_weight = register_parameter("output_weight", glorot(config_.hidden, config_.num_classes));
}

at::Tensor NodeGcnImpl::first_layer(const nn::SparseAdjacency& adjacency) {
  const bool same = memo_.product.defined() &&
                    memo_.weight == identity_weight.unsafeGetTensorImpl() &&
                    memo_.version == identity_weight._version() && memo_.adjacency == &adjacency;
  if (!torch::GradMode::is_enabled()) {
    if (same) return memo_.product;
    memo_ = {identity_weight.unsafeGetTensorImpl(), identity_weight._version(), &adjacency,
             adjacency.multiply(identity_weight)};
    return memo_.product;
  }
  // Used once: the optimiser step that follows changes W1.
  auto known = std::exchange(memo_, FirstLayerMemo{}).product;
  return same ? adjacency.attach_product(identity_weight, known)
              : adjacency.multiply(identity_weight);
}

at::Tensor NodeGcnImpl::forward(const nn::SparseAdjacency& adjacency) {
  auto hidden = torch::relu(first_layer(adjacency));
  hidden = torch::dropout(hidden, config_.dropout, is_training());
  // Â · (H · W2) rather than (Â · H) · W2: the product runs over num_classes channels, not hidden.
  return adjacency.multiply(torch::mm(hidden, output_weight));
}

at::Tensor NodeGcnImpl::forward_on(const nn::SparseAdjacency& subgraph,
                                   const at::Tensor& node_ids) {
  if (node_ids.dim() != 1 || node_ids.numel() != subgraph.num_nodes())
    throw std::invalid_argument("node GCN: one node id per subgraph node is needed");
  auto hidden = torch::relu(subgraph.multiply(identity_weight.index_select(0, node_ids)));
  hidden = torch::dropout(hidden, config_.dropout, is_training());
  return subgraph.multiply(torch::mm(hidden, output_weight));
}

at::Tensor NodeGcnImpl::infer_by_row_blocks(const nn::SparseAdjacency& adjacency,
                                            const InferenceBlocks& blocks) {
  require_inference("inference by row blocks", blocks);
  const auto rows_per_block = blocks.rows;
  const auto nodes = adjacency.num_nodes();
  auto projected = torch::empty({nodes, config_.num_classes}, output_weight.options());
  for (std::int64_t first = 0; first < nodes; first += rows_per_block) {
    const auto end = std::min(nodes, first + rows_per_block);
    const auto hidden = adjacency.multiply_rows(first, end, identity_weight).relu_();
    projected.narrow(0, first, end - first).copy_(torch::mm(hidden, output_weight));
  }
  const auto device = projected.device();
  if (adjacency.row_offsets().device() == device) return adjacency.multiply(projected);
  return adjacency.multiply_rows(0, nodes, projected);
}

at::Tensor NodeGcnImpl::infer_rows(const nn::SparseAdjacency& adjacency, const at::Tensor& rows,
                                   const InferenceBlocks& blocks) {
  require_inference("inference of listed rows", blocks);
  const auto rows_per_block = blocks.rows;
  // The rows' neighbours, ascending: the hidden rows their logits read.
  const auto offsets = adjacency.row_offsets().cpu();
  const auto columns = adjacency.columns().cpu();
  const auto* begin_of = offsets.data_ptr<std::int64_t>();
  const auto* column = columns.data_ptr<std::int32_t>();
  const auto listed = rows.contiguous();
  std::vector<bool> needed(static_cast<std::size_t>(adjacency.num_nodes()), false);
  for (std::int64_t k = 0; k < listed.numel(); ++k) {
    const auto row = listed.data_ptr<std::int64_t>()[k];
    for (auto e = begin_of[row]; e < begin_of[row + 1]; ++e)
      needed[static_cast<std::size_t>(column[e])] = true;
  }
  std::vector<std::int64_t> neighbours;
  for (std::size_t node = 0; node < needed.size(); ++node)
    if (needed[node]) neighbours.push_back(static_cast<std::int64_t>(node));
  // Z = ReLU(Â · W1) · W2 on those rows (zero elsewhere: never read), then the rows of Â · Z.
  auto projected =
      torch::zeros({adjacency.num_nodes(), config_.num_classes}, output_weight.options());
  const auto count = static_cast<std::int64_t>(neighbours.size());
  for (std::int64_t first = 0; first < count; first += rows_per_block) {
    const auto end = std::min(count, first + rows_per_block);
    const auto block = torch::tensor(
        std::vector<std::int64_t>(neighbours.begin() + first, neighbours.begin() + end),
        torch::kInt64);
    const auto hidden = adjacency.multiply_listed_rows(block, identity_weight).relu_();
    projected.index_copy_(0, block.to(projected.device()), torch::mm(hidden, output_weight));
  }
  return adjacency.multiply_listed_rows(listed, projected);
}

namespace kinds {
namespace {

constexpr std::int64_t kTextGcnHidden = 200;

class GcnNodeModel final : public NodeModelKind {
 public:
  std::string_view name() const override { return "gcn"; }
  std::string_view summary() const override { return "TextGCN's, 200 hidden"; }
  double default_learning_rate() const override { return 0.02; }  // TextGCN's
  bool reads_option(std::string_view option) const override {
    return option == "hidden" || option == "dropout";
  }
  NodeModelConfig configure(std::int64_t num_nodes, std::int64_t num_classes,
                            const NodeModelOverrides& given) const override {
    return {.num_nodes = num_nodes,
            .hidden = given.hidden.value_or(kTextGcnHidden),
            .num_classes = num_classes,
            .dropout = given.dropout.value_or(0.5),
            .architecture = std::string(name())};
  }
  void validate(const NodeModelConfig& config) const override {
    if (config.heads != 1)
      throw std::invalid_argument("node gcn: a GCN has no attention heads (heads must be 1)");
    if (config.layers != 2)
      throw std::invalid_argument("node gcn: TextGCN's GCN has two layers (layers must be 2)");
  }
  std::int64_t parameter_count(const NodeModelConfig& config) const override {
    return (config.num_nodes + config.num_classes) * config.hidden;  // W1 and W2, no biases
  }
  bool cost_grows_with_entries() const override { return false; }
  std::string describe(const NodeModelConfig& config) const override {
    return fmt::format("GCN ({} hidden, dropout {})", config.hidden, config.dropout);
  }
  NodeModel build(const NodeModelConfig& config) const override {
    return std::make_shared<NodeGcnImpl>(config);
  }
};

}  // namespace

const NodeModelKind& gcn_node_model() {
  static const GcnNodeModel kind;
  return kind;
}

}  // namespace kinds
}  // namespace headroom::models
