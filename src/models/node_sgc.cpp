#include "headroom/models/node_sgc.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "headroom/models/node_model_kind.hpp"

namespace headroom::models {

NodeSgcImpl::NodeSgcImpl(const NodeModelConfig& config) : NodeModelImpl(config) {
  if (config_.architecture != "sgc")
    throw std::invalid_argument("node SGC: the configuration names another architecture");
  // Glorot uniform over W's two dimensions, as the GCN initialises its weights.
  const auto rows = config_.num_nodes;
  const auto columns = config_.num_classes;
  const double limit = std::sqrt(6.0 / static_cast<double>(rows + columns));
  identity_weight =
      register_parameter("identity_weight", torch::empty({rows, columns}).uniform_(-limit, limit));
}

at::Tensor NodeSgcImpl::forward(const nn::SparseAdjacency& adjacency) {
  auto propagated = identity_weight;
  for (std::int64_t step = 0; step < config_.layers; ++step)
    propagated = adjacency.multiply(propagated);
  return propagated;
}

at::Tensor NodeSgcImpl::forward_on(const nn::SparseAdjacency& subgraph,
                                   const at::Tensor& node_ids) {
  if (node_ids.dim() != 1 || node_ids.numel() != subgraph.num_nodes())
    throw std::invalid_argument("node SGC: one node id per subgraph node is needed");
  auto propagated = identity_weight.index_select(0, node_ids);
  for (std::int64_t step = 0; step < config_.layers; ++step)
    propagated = subgraph.multiply(propagated);
  return propagated;
}

at::Tensor NodeSgcImpl::propagate_in_blocks(const nn::SparseAdjacency& adjacency, at::Tensor dense,
                                            std::int64_t steps, std::int64_t rows_per_block) {
  const auto nodes = adjacency.num_nodes();
  for (std::int64_t step = 0; step < steps; ++step) {
    auto next = torch::empty_like(dense);
    for (std::int64_t first = 0; first < nodes; first += rows_per_block) {
      const auto end = std::min(nodes, first + rows_per_block);
      next.narrow(0, first, end - first).copy_(adjacency.multiply_rows(first, end, dense));
    }
    dense = std::move(next);
  }
  return dense;
}

at::Tensor NodeSgcImpl::infer_by_row_blocks(const nn::SparseAdjacency& adjacency,
                                            const InferenceBlocks& blocks) {
  require_inference("inference by row blocks", blocks);
  return propagate_in_blocks(adjacency, identity_weight, config_.layers, blocks.rows);
}

at::Tensor NodeSgcImpl::infer_rows(const nn::SparseAdjacency& adjacency, const at::Tensor& rows,
                                   const InferenceBlocks& blocks) {
  require_inference("inference of listed rows", blocks);
  const auto before_last =
      propagate_in_blocks(adjacency, identity_weight, config_.layers - 1, blocks.rows);
  return adjacency.multiply_listed_rows(rows.contiguous(), before_last);
}

namespace kinds {
namespace {

constexpr std::int64_t kPropagationSteps = 2;  // Wu et al.'s K on the citation graphs

class SgcNodeModel final : public NodeModelKind {
 public:
  std::string_view name() const override { return "sgc"; }
  std::string_view summary() const override { return "Wu et al.'s SGC, Â^K · W, K = 2"; }
  // Wu et al.'s: a linear model over K-hop averages moves its logits at most the learning rate
  // per step (Â's rows sum to about 1), so TextGCN's 0.02 was still improving after 200 epochs.
  double default_learning_rate() const override { return 0.2; }
  bool reads_option(std::string_view option) const override { return option == "layers"; }
  NodeModelConfig configure(std::int64_t num_nodes, std::int64_t num_classes,
                            const NodeModelOverrides& given) const override {
    // No hidden layer: its one weight is N × num_classes, and it has no dropout.
    return {.num_nodes = num_nodes,
            .hidden = num_classes,
            .num_classes = num_classes,
            .dropout = 0.0,
            .architecture = std::string(name()),
            .layers = given.layers.value_or(kPropagationSteps)};
  }
  void validate(const NodeModelConfig& config) const override {
    if (config.heads != 1 || config.hidden != config.num_classes || config.dropout != 0)
      throw std::invalid_argument(
          "node sgc: SGC has no hidden layer, attention heads or dropout (heads 1, hidden = "
          "classes, dropout 0)");
  }
  std::int64_t parameter_count(const NodeModelConfig& config) const override {
    return config.num_nodes * config.num_classes;
  }
  bool cost_grows_with_entries() const override { return false; }
  std::string describe(const NodeModelConfig& config) const override {
    return fmt::format("SGC (K = {} propagations, no hidden layer)", config.layers);
  }
  NodeModel build(const NodeModelConfig& config) const override {
    return std::make_shared<NodeSgcImpl>(config);
  }
};

}  // namespace

const NodeModelKind& sgc_node_model() {
  static const SgcNodeModel kind;
  return kind;
}

}  // namespace kinds
}  // namespace headroom::models
