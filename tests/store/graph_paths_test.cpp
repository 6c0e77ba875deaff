// Path counts from degrees (store/graph_paths.hpp) against brute-force enumeration: the 2nd- and
// 3rd-order paths listed one by one the way SGMP's reference builds them (self-loops added to every
// node, then its triplet and fourthlet masks), on random small directed graphs with self-loops and
// repeated edges, and on graphs whose counts are known by hand.
#include "headroom/store/graph_paths.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "headroom/util/split_mix.hpp"

namespace headroom::store {
namespace {

using Edge = std::pair<std::int32_t, std::int32_t>;

std::vector<std::int32_t> flat(const std::vector<Edge>& edges) {
  std::vector<std::int32_t> out;
  for (const auto& [s, t] : edges) out.insert(out.end(), {s, t});
  return out;
}

// SGMP's enumeration, written out: the graph's edges without its own self-loops, plus one
// self-loop per node; triplets i->j->k kept when all equal or all distinct; fourthlets extend a
// kept triplet by k->p and are kept when i,j,k,p are pairwise distinct or all equal.
struct Enumerated {
  std::uint64_t triplets = 0;
  std::uint64_t fourthlets = 0;
};

Enumerated enumerate_like_sgmp(const std::vector<Edge>& edges, std::int32_t nodes) {
  std::vector<Edge> with_loops;
  for (const auto& e : edges)
    if (e.first != e.second) with_loops.push_back(e);
  for (std::int32_t v = 0; v < nodes; ++v) with_loops.emplace_back(v, v);
  Enumerated counted;
  for (const auto& [i, j] : with_loops)
    for (const auto& [j2, k] : with_loops) {
      if (j2 != j) continue;
      const bool all_equal = i == j && j == k;
      const bool distinct = i != j && j != k && i != k;
      if (!all_equal && !distinct) continue;
      ++counted.triplets;
      for (const auto& [k2, p] : with_loops) {
        if (k2 != k) continue;
        const bool path = i != p && j != k && j != p && k != p && i != j && i != k;
        const bool loop = i == j && j == k && k == p;
        if (path || loop) ++counted.fourthlets;
      }
    }
  return counted;
}

// 2nd-order paths by the definition: two non-loop edges i->j, j->k with k != i.
std::uint64_t second_order_by_definition(const std::vector<Edge>& edges) {
  std::uint64_t count = 0;
  for (const auto& [i, j] : edges)
    for (const auto& [j2, k] : edges)
      if (i != j && j2 == j && j != k && k != i) ++count;
  return count;
}

std::vector<Edge> random_graph(util::SplitMix64& random, std::int32_t nodes, bool symmetric) {
  std::vector<Edge> edges;
  const std::uint64_t draws = random.next() % (3 * static_cast<std::uint64_t>(nodes) + 1);
  for (std::uint64_t d = 0; d < draws; ++d) {
    const auto s = static_cast<std::int32_t>(random.next() % static_cast<std::uint64_t>(nodes));
    const auto t = static_cast<std::int32_t>(random.next() % static_cast<std::uint64_t>(nodes));
    edges.emplace_back(s, t);
    if (symmetric) edges.emplace_back(t, s);
  }
  return edges;
}

TEST(GraphPaths, CountsFromDegreesEqualSgmpsEnumerationOnRandomGraphs) {
  util::SplitMix64 random(48);
  std::uint64_t nonzero_third = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const auto nodes = static_cast<std::int32_t>(1 + random.next() % 9);
    const auto edges = random_graph(random, nodes, trial % 2 == 0);
    const PathCounts counts = count_paths(flat(edges), static_cast<std::uint32_t>(nodes));
    const Enumerated expected = enumerate_like_sgmp(edges, nodes);
    std::uint64_t non_loops = 0;
    for (const auto& [s, t] : edges) non_loops += s != t ? 1 : 0;
    ASSERT_EQ(counts.first, non_loops) << "trial " << trial;
    ASSERT_EQ(counts.second, second_order_by_definition(edges)) << "trial " << trial;
    // SGMP's triplets are the 2nd-order paths plus one v->v->v per node.
    ASSERT_EQ(expected.triplets, counts.second + static_cast<std::uint64_t>(nodes)) << trial;
    ASSERT_EQ(counts.third, expected.fourthlets) << "trial " << trial;
    nonzero_third += counts.third > static_cast<std::uint64_t>(nodes) ? 1 : 0;
  }
  EXPECT_GT(nonzero_third, 100U);  // the graphs had real 3rd-order paths, not only self-loops
}

// Known by hand: an undirected path a-b-c-d has 6 directed edges, 4 2nd-order paths (a-b-c, b-c-d
// and back) and 2 3rd-order ones (a-b-c-d and back), plus the 4 nodes' own.
TEST(GraphPaths, AnUndirectedPathOfFourNodesHasTwoThirdOrderPaths) {
  const std::vector<Edge> path = {{0, 1}, {1, 0}, {1, 2}, {2, 1}, {2, 3}, {3, 2}};
  const PathCounts counts = count_paths(flat(path), 4);
  EXPECT_EQ(counts.first, 6U);
  EXPECT_EQ(counts.second, 4U);
  EXPECT_EQ(counts.third, 2U + 4U);
}

// An undirected triangle: each 3rd-order walk would return to its start, so none counts.
TEST(GraphPaths, ATriangleHasNoThirdOrderPathBesidesTheNodesOwn) {
  const std::vector<Edge> triangle = {{0, 1}, {1, 0}, {1, 2}, {2, 1}, {2, 0}, {0, 2}};
  const PathCounts counts = count_paths(flat(triangle), 3);
  EXPECT_EQ(counts.second, 6U);
  EXPECT_EQ(counts.third, 3U);
}

}  // namespace
}  // namespace headroom::store
