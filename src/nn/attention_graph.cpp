#include "headroom/nn/attention_graph.hpp"

#include <torch/torch.h>

#include <optional>

namespace headroom::nn {
namespace {

// [N + 1] exclusive prefix sum of how often each node occurs in `nodes`.
at::Tensor offsets_of(const at::Tensor& nodes, std::int64_t num_nodes) {
  auto counts = torch::zeros({num_nodes + 1}, nodes.options());
  counts.index_add_(0, nodes + 1, torch::ones_like(nodes));
  return counts.cumsum(0);
}

}  // namespace

AttentionGraph build_attention_graph(const at::Tensor& edge_index, std::int64_t num_nodes) {
  TORCH_CHECK(
      edge_index.dim() == 2 && edge_index.size(0) == 2 && edge_index.scalar_type() == at::kLong,
      "attention graph: edge_index must be int64 [2, E], got ", edge_index.sizes());
  TORCH_CHECK(num_nodes >= 0, "attention graph: num_nodes must be non-negative");
  const auto source = edge_index[0].contiguous();
  const auto target = edge_index[1].contiguous();
  const auto num_edges = source.size(0);

  AttentionGraph graph;
  graph.num_nodes = num_nodes;
  graph.edge_index = edge_index;
  graph.target_order = std::get<1>(torch::sort(target, std::optional<bool>(true), /*dim=*/0));
  graph.source_by_target = source.index_select(0, graph.target_order);
  graph.target_offsets = offsets_of(target, num_nodes);

  // Stable sorts (std::optional<bool>: a plain bool would pick the sort(dim, descending)
  // overload) keep equal keys in input order, so the layout is deterministic.
  const auto source_order = std::get<1>(torch::sort(source, std::optional<bool>(true), /*dim=*/0));
  auto position = torch::empty({num_edges}, source.options());
  position.index_put_({graph.target_order}, torch::arange(num_edges, source.options()));
  graph.target_by_source = target.index_select(0, source_order);
  graph.position_by_source = position.index_select(0, source_order);
  graph.source_offsets = offsets_of(source, num_nodes);
  return graph;
}

}  // namespace headroom::nn
