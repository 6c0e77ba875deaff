// The parent of each node of a tree (or a forest) as a store holds it (node_parent: the parent's
// local index, kNoParent for a root). Learning tasks on trees (GT-SSL's partial order between a
// node and its ancestors) follow parents upward, so a parent outside the graph or a cycle would
// send them past the graph's nodes or round forever: both are refused when a store is written.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace headroom::store {

inline constexpr std::int64_t kNoParent = -1;

struct ParentProblem {
  std::uint64_t node = 0;  // local index of the first node found wrong
  std::string reason;      // e.g. "its parent 9 is outside the graph's 5 nodes"
};

// The first problem of `parents` (one entry per node of one graph), or nullopt when every entry is
// kNoParent or another node of the graph and following parents from any node ends at a root. A
// cycle is reported at its node of lowest index, naming the cycle's length. O(nodes) time and
// memory; thread-safe.
std::optional<ParentProblem> find_parent_problem(std::span<const std::int64_t> parents);

}  // namespace headroom::store
