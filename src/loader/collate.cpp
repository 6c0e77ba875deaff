#include "headroom/loader/collate.hpp"

#include <fmt/format.h>
#include <torch/torch.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "headroom/store/graph_values.hpp"

namespace headroom::loader {
namespace {

at::Tensor allocate(at::IntArrayRef shape, at::ScalarType dtype, bool pinned) {
  auto options = at::TensorOptions().dtype(dtype);
  // Pinned allocation goes through the CUDA allocator: without a device it would throw.
  if (pinned && at::hasCUDA()) options = options.pinned_memory(true);
  return at::empty(shape, options);
}

}  // namespace

GraphBatch collate(const store::GraphStore& store, std::span<const std::uint32_t> graph_ids,
                   const CollateOptions& options) {
  const std::size_t graph_count = store.num_graphs();
  std::vector<store::GraphView> views;
  views.reserve(graph_ids.size());
  std::size_t total_nodes = 0;
  std::size_t total_edges = 0;
  for (const std::uint32_t id : graph_ids) {
    if (id >= graph_count) {
      throw std::out_of_range(
          fmt::format("collate: graph id {} out of range (store has {} graphs)", id, graph_count));
    }
    views.push_back(store.graph(id));
    // Before any tensor exists: a bad value would otherwise train silently (an edge into another
    // graph) or fail deep inside LibTorch without naming the store or the graph.
    store::check_graph_values(store, id, views.back(), {.edge_features = options.edge_features});
    total_nodes += views.back().num_nodes();
    total_edges += views.back().num_edges();
  }

  const auto node_width = static_cast<std::int64_t>(store.metadata().node_feature_count);
  const auto edge_width = static_cast<std::int64_t>(store.metadata().edge_feature_count);
  const auto num_graphs = static_cast<std::int64_t>(graph_ids.size());
  const auto num_nodes = static_cast<std::int64_t>(total_nodes);
  const auto num_edges = static_cast<std::int64_t>(total_edges);
  const bool pinned = options.pin_memory;

  GraphBatch out;
  out.num_graphs = num_graphs;
  out.num_nodes = num_nodes;
  out.num_edges = num_edges;
  out.x = allocate({num_nodes, node_width}, at::kFloat, pinned);
  out.edge_index = allocate({2, num_edges}, at::kLong, pinned);
  out.batch = allocate({num_nodes}, at::kLong, pinned);
  out.y = allocate({num_graphs}, at::kLong, pinned);
  out.graph_ids = allocate({num_graphs}, at::kLong, pinned);
  out.host_graph_ids = out.graph_ids;
  if (options.edge_features) out.edge_attr = allocate({num_edges, edge_width}, at::kFloat, pinned);

  // Graph-level arrays and the node membership vector.
  {
    auto* y = out.y.data_ptr<std::int64_t>();
    auto* ids = out.graph_ids.data_ptr<std::int64_t>();
    auto* batch = out.batch.data_ptr<std::int64_t>();
    for (std::size_t i = 0; i < views.size(); ++i) {
      y[i] = views[i].label;
      ids[i] = graph_ids[i];
      const std::size_t n = views[i].num_nodes();
      for (std::size_t k = 0; k < n; ++k) batch[k] = static_cast<std::int64_t>(i);
      batch += n;
    }
  }

  // Node features: each graph's rows are contiguous in the store, so one memcpy per graph.
  {
    auto* x = out.x.data_ptr<float>();
    for (const auto& view : views) {
      const std::size_t count = view.node_features.size();
      if (count != 0) std::memcpy(x, view.node_features.data(), count * sizeof(float));
      x += count;
    }
  }

  // Edge index: the store holds (source, target) pairs of local indices; the batch wants two rows
  // of batch-global indices.
  {
    auto* source = out.edge_index.data_ptr<std::int64_t>();
    auto* target = source + num_edges;
    std::int64_t first_node = 0;
    for (const auto& view : views) {
      const std::int32_t* pairs = view.edge_index.data();
      const std::size_t e = view.num_edges();
      for (std::size_t k = 0; k < e; ++k) {
        source[k] = pairs[2 * k] + first_node;
        target[k] = pairs[2 * k + 1] + first_node;
      }
      source += e;
      target += e;
      first_node += static_cast<std::int64_t>(view.num_nodes());
    }
  }

  if (options.edge_features) {
    auto* attr = out.edge_attr.data_ptr<float>();
    for (const auto& view : views) {
      const std::size_t count = view.edge_features.size();
      if (count != 0) std::memcpy(attr, view.edge_features.data(), count * sizeof(float));
      attr += count;
    }
  }
  return out;
}

}  // namespace headroom::loader
