#include "headroom/store/graph_values.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <span>
#include <string_view>

#include "headroom/store/store_arrays.hpp"
#include "headroom/store/store_error.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::store {
namespace {

[[noreturn]] void reject(const GraphStore& store, std::string_view array, std::size_t graph_id,
                         const std::string& what) {
  throw StoreError(fmt::format("{}: array '{}' of graph {}: {} (the store is corrupt)",
                               util::printable_path(store.path()), array, graph_id, what));
}

// NaN and the infinities have every exponent bit set. Testing the bits, rather than calling
// std::isfinite, keeps the loop branch-free so that the compiler vectorises it: the common case
// (all finite) costs one pass at memory speed.
bool all_finite(std::span<const float> values) {
  constexpr std::uint32_t kExponent = 0x7F800000U;
  std::uint32_t non_finite = 0;
  for (const float v : values)
    non_finite |= (std::bit_cast<std::uint32_t>(v) & kExponent) == kExponent;
  return non_finite == 0;
}

void check_finite(const GraphStore& store, std::string_view array, std::size_t graph_id,
                  std::span<const float> values, std::size_t width) {
  if (all_finite(values)) return;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      reject(store, array, graph_id,
             fmt::format("row {} column {} is {}", i / width, i % width, values[i]));
    }
  }
}

void check_edges(const GraphStore& store, std::size_t graph_id, const GraphView& view) {
  const auto nodes = static_cast<std::uint32_t>(view.num_nodes());
  std::uint32_t outside = 0;
  // A negative index becomes a huge unsigned one: one comparison covers both ends.
  for (const std::int32_t index : view.edge_index)
    outside |= static_cast<std::uint32_t>(static_cast<std::uint32_t>(index) >= nodes);
  if (outside == 0) return;
  for (std::size_t k = 0; k < view.edge_index.size(); ++k) {
    const std::int32_t index = view.edge_index[k];
    if (index < 0 || static_cast<std::uint32_t>(index) >= nodes) {
      reject(store, arrays::kEdgeIndex, graph_id,
             fmt::format("edge {} has {} node {}, outside the graph's {} nodes", k / 2,
                         k % 2 == 0 ? "source" : "target", index, nodes));
    }
  }
}

void check_id_indices(const GraphStore& store, std::size_t graph_id, const GraphView& view) {
  const std::size_t width = store.metadata().node_feature_count;
  const auto last_index = static_cast<float>(identity_classes(store.metadata()) - 1);
  const std::size_t nodes = view.num_nodes();
  const float* features = view.node_features.data();
  // Branch-free first: clamped into range, a valid index is unchanged and survives a round trip
  // through an integer (NaN never equals itself, so it fails too).
  bool any_bad = false;
  for (std::size_t node = 0; node < nodes; ++node) {
    const float index = features[node * width];
    const float clamped = std::fmin(std::fmax(index, 0.0F), last_index);
    any_bad |=
        (clamped != index) | (static_cast<float>(static_cast<std::int32_t>(clamped)) != clamped);
  }
  if (!any_bad) return;
  for (std::size_t node = 0; node < nodes; ++node) {
    const float index = features[node * width];
    if (!(index >= 0.0F && index <= last_index && index == std::trunc(index))) {
      reject(store, arrays::kNodeFeatures, graph_id,
             fmt::format("node {} has identity {} (feature 0), not a whole number in [0, {}] "
                         "(node identity {})",
                         node, index, last_index,
                         graph::node_identity_name(store.metadata().node_features.identity)));
    }
  }
}

// A tree's parents: a root's -1 or a node of the graph (cycles are refused when the store is
// written; a walk up from a node is bounded by this check and the node count).
void check_parents(const GraphStore& store, std::size_t graph_id, const GraphView& view) {
  const auto nodes = static_cast<std::int64_t>(view.num_nodes());
  for (std::size_t node = 0; node < view.parents.size(); ++node) {
    const std::int32_t parent = view.parents[node];
    if (parent < -1 || parent >= nodes)
      reject(
          store, arrays::kNodeParent, graph_id,
          fmt::format("node {} has parent {}, outside the graph's {} nodes", node, parent, nodes));
  }
}

}  // namespace

void check_graph_values(const GraphStore& store, std::size_t graph_id, const GraphView& view,
                        GraphValueChecks checks) {
  const auto& m = store.metadata();
  check_edges(store, graph_id, view);
  check_finite(store, arrays::kNodeFeatures, graph_id, view.node_features, m.node_feature_count);
  check_id_indices(store, graph_id, view);
  check_finite(store, arrays::kNodePositions, graph_id, view.positions,
               std::max<std::size_t>(m.position_dimensions, 1));
  check_parents(store, graph_id, view);
  if (checks.edge_features) {
    check_finite(store, arrays::kEdgeFeatures, graph_id, view.edge_features, m.edge_feature_count);
  }
}

}  // namespace headroom::store
