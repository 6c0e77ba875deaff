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

// Where the next graph's rows go in the batch's host buffers.
struct BatchCursor {
  float* x;
  std::int64_t* batch;
  std::int64_t* source;  // edge_index row 0
  std::int64_t* target;  // edge_index row 1
  float* edge_attr;      // null when edge features are not collated
  float* pos;            // null when the store has no positions
  std::int64_t* parent;  // null when the store has no parents
  std::int64_t first_node = 0;

  // Graph `position` of the batch: each of its arrays is contiguous in the store, so node and
  // edge features are one memcpy each; its (source, target) pairs of local indices become two
  // rows of batch-global indices.
  void append(const store::GraphView& view, std::int64_t position) {
    const std::size_t n = view.num_nodes();
    for (std::size_t k = 0; k < n; ++k) batch[k] = position;
    batch += n;
    copy(view.node_features, x);
    const std::int32_t* pairs = view.edge_index.data();
    const std::size_t e = view.num_edges();
    for (std::size_t k = 0; k < e; ++k) {
      source[k] = pairs[2 * k] + first_node;
      target[k] = pairs[2 * k + 1] + first_node;
    }
    source += e;
    target += e;
    if (edge_attr != nullptr) copy(view.edge_features, edge_attr);
    append_geometry(view);
    first_node += static_cast<std::int64_t>(n);
  }

  // Positions are one memcpy; a parent's local index becomes batch-global (a root stays -1).
  void append_geometry(const store::GraphView& view) {
    if (pos != nullptr) copy(view.positions, pos);
    if (parent == nullptr) return;
    for (const std::int32_t local : view.parents) *parent++ = local < 0 ? -1 : local + first_node;
  }

  static void copy(std::span<const float> from, float*& to) {
    if (!from.empty()) std::memcpy(to, from.data(), from.size_bytes());
    to += from.size();
  }
};

// A geometric store's fields, each allocated only when the store has it.
void allocate_geometry(GraphBatch& out, const store::StoreMetadata& metadata, bool pinned) {
  if (metadata.position_dimensions > 0) {
    const auto dimensions = static_cast<std::int64_t>(metadata.position_dimensions);
    out.pos = allocate({out.num_nodes, dimensions}, at::kFloat, pinned);
  }
  if (metadata.has_parents) out.parent = allocate({out.num_nodes}, at::kLong, pinned);
  if (!metadata.target_name.empty()) out.target = allocate({out.num_graphs}, at::kFloat, pinned);
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
  allocate_geometry(out, store.metadata(), pinned);

  auto* y = out.y.data_ptr<std::int64_t>();
  auto* ids = out.graph_ids.data_ptr<std::int64_t>();
  auto* source = out.edge_index.data_ptr<std::int64_t>();
  BatchCursor cursor{out.x.data_ptr<float>(),
                     out.batch.data_ptr<std::int64_t>(),
                     source,
                     source + num_edges,
                     options.edge_features ? out.edge_attr.data_ptr<float>() : nullptr,
                     out.pos.defined() ? out.pos.data_ptr<float>() : nullptr,
                     out.parent.defined() ? out.parent.data_ptr<std::int64_t>() : nullptr};
  const auto targets = store.size_index().target;
  float* target = out.target.defined() ? out.target.data_ptr<float>() : nullptr;
  for (std::size_t i = 0; i < views.size(); ++i) {
    y[i] = views[i].label;
    ids[i] = graph_ids[i];
    if (target != nullptr) target[i] = static_cast<float>(targets[graph_ids[i]]);
    cursor.append(views[i], static_cast<std::int64_t>(i));
    // While the graph's rows are still in cache from the copy (checking them in a pass of their
    // own would fetch them from memory twice). The batch never leaves here with a bad value: an
    // edge into another graph would train silently, a bad CAN-ID index or a NaN would fail deep
    // inside LibTorch without naming the store or the graph.
    store::check_graph_values(store, graph_ids[i], views[i],
                              {.edge_features = options.edge_features});
  }
  return out;
}

}  // namespace headroom::loader
