// The subgraph of a node-graph store induced by some of its nodes: every entry between two chosen
// nodes, with the store's weights, the chosen nodes renumbered 0..k-1 in the order given. Memory
// planning measures training steps on such subgraphs, smaller than the whole graph, to predict
// the whole graph's (train/step/node_step_probe.hpp). Owns its arrays (host memory, not tensors).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "headroom/store/node_graph_store.hpp"

namespace headroom::store {

struct NodeSubgraph {
  std::vector<std::int64_t> row_offsets;  // [k + 1], from 0
  std::vector<std::int32_t> columns;      // new ids, ascending within a row
  std::vector<float> weights;             // the store's entry weights, as stored
  std::vector<std::int32_t> labels;       // each chosen node's label (kNoLabel: none)
  std::vector<std::uint8_t> splits;       // each chosen node's NodeSplit

  std::int64_t num_nodes() const { return static_cast<std::int64_t>(labels.size()); }
  std::int64_t num_entries() const { return static_cast<std::int64_t>(columns.size()); }
  // New ids of the chosen nodes in `split`, ascending.
  std::vector<std::uint32_t> nodes_in(NodeSplit split) const;
};

// `nodes`: ascending, no repeats, each below store.num_nodes() (else std::invalid_argument). The
// store's symmetry carries over: the induced subgraph of a symmetric adjacency is symmetric.
// Time O(k + entries of the chosen rows); pure, thread-safe.
NodeSubgraph induced_subgraph(const NodeGraphStore& store, std::span<const std::uint32_t> nodes);

}  // namespace headroom::store
