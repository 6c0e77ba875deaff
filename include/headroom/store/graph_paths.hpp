// Higher-order paths of one graph, counted from its degrees without enumerating them, so that a
// store records each graph's path blow-up in its size index (docs/store-format.md) and a planner
// knows it before the graph is loaded. Path-based encoders (SGMP: Zhang et al., "Spatial Graph
// Message Passing") gather features per 3rd-order path, so their memory grows with these counts,
// not with nodes or edges.
#pragma once

#include <cstdint>
#include <span>

namespace headroom::store {

// The orders a store records, in this order (graph_num_paths' columns).
inline constexpr std::size_t kPathOrders = 3;

// Paths of a directed graph, as an SGMP-style encoder enumerates them. Every stored edge is a
// directed edge (an undirected edge is two); an edge from a node to itself is not a path and is
// left out; an edge given twice is two edges, so every path through it counts twice.
//  - first:  edges i->j (i != j).
//  - second: i->j->k with k != i: two edges that do not go straight back.
//  - third:  what SGMP's reference enumeration keeps (utils `triplets`/`fourthplets`, run after
//            add_self_loops): every i->j->k->p whose four nodes are pairwise distinct (so k != i,
//            p != j, p != i), plus one degenerate path v->v->v->v per node, which the encoder's
//            added self-loops give every node so that a node on no longer path still takes part.
struct PathCounts {
  std::uint64_t first = 0;
  std::uint64_t second = 0;
  std::uint64_t third = 0;
};

// `edges` holds (source, target) pairs, local node indices in [0, num_nodes) (the caller checked
// them). O(edges * degree) time: per middle edge j->k, the in-edges of j are scanned once to
// subtract the directed triangles i->j->k->i; O(nodes + edges) memory. No count can overflow its
// uint64: third <= edges^2 + nodes, and edges < 2^32 (a store's per-graph edge count is uint32).
// Thread-safe (no shared state).
PathCounts count_paths(std::span<const std::int32_t> edges, std::uint32_t num_nodes);

}  // namespace headroom::store
