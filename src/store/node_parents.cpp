#include "headroom/store/node_parents.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace headroom::store {

std::optional<ParentProblem> find_parent_problem(std::span<const std::int64_t> parents) {
  const std::size_t nodes = parents.size();
  for (std::size_t v = 0; v < nodes; ++v) {
    const std::int64_t parent = parents[v];
    if (parent == kNoParent) continue;
    if (parent < 0 || static_cast<std::uint64_t>(parent) >= nodes)
      return ParentProblem{v, fmt::format("its parent {} is outside the graph's {} nodes (a root's "
                                          "parent is {})",
                                          parent, nodes, kNoParent)};
    if (static_cast<std::uint64_t>(parent) == v)
      return ParentProblem{v, "it is its own parent (a cycle of 1 node)"};
  }
  // Walk up from every node, colouring the walk with its start: a walk that meets its own colour
  // went round a cycle; one that meets an earlier walk's ends where that one ended (at a root).
  constexpr std::size_t kUnvisited = static_cast<std::size_t>(-1);
  std::vector<std::size_t> walk_of(nodes, kUnvisited);
  for (std::size_t start = 0; start < nodes; ++start) {
    std::size_t v = start;
    while (walk_of[v] == kUnvisited) {
      walk_of[v] = start;
      if (parents[v] == kNoParent) break;
      v = static_cast<std::size_t>(parents[v]);
    }
    if (walk_of[v] != start || parents[v] == kNoParent) continue;
    // v is on a cycle: report its lowest node and length.
    std::size_t lowest = v;
    std::size_t length = 0;
    std::size_t u = v;
    do {
      lowest = std::min(lowest, u);
      ++length;
      u = static_cast<std::size_t>(parents[u]);
    } while (u != v);
    return ParentProblem{lowest, fmt::format("following parents from it comes back to it (a "
                                             "cycle of {} nodes); a tree's parents end at a root",
                                             length)};
  }
  return std::nullopt;
}

}  // namespace headroom::store
