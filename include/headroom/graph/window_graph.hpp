// One sliding-window graph of CAN traffic, in the flat layout the graph store keeps on disk.
#pragma once

#include <cstdint>
#include <vector>

#include "headroom/graph/node_features.hpp"

namespace headroom::graph {

// The KD-GAT node features; a graph built with optional groups has more (node_feature_count).
inline constexpr std::size_t kNodeFeatureCount = kKdGatNodeFeatureCount;
inline constexpr std::size_t kEdgeFeatureCount = 11;

// Owns its arrays; reused across windows by WindowGraphBuilder to avoid reallocation.
struct WindowGraph {
  // Per node, ascending: the node's key (the CAN-ID vocabulary index, or the raw CAN ID while the
  // vocabulary is not known yet). Feature 0 of each node equals its key.
  std::vector<std::uint32_t> node_keys;
  std::vector<float> node_features;      // num_nodes x node_feature_count, row-major
  std::vector<std::int32_t> edge_index;  // num_edges x 2 (source, target), local node indices
  std::vector<float> edge_features;      // num_edges x kEdgeFeatureCount, row-major
  std::uint8_t label = 0;                // 1 when any frame of the window is an attack
  std::size_t node_feature_count = kNodeFeatureCount;  // NodeFeatureOptions::count()

  std::size_t num_nodes() const { return node_keys.size(); }
  std::size_t num_edges() const { return edge_index.size() / 2; }
};

}  // namespace headroom::graph
