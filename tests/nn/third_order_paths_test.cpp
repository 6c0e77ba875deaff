// nn/third_order_paths.hpp against two independent oracles: a brute-force loop over every triple
// of edge columns (random small graphs with duplicate edges, self-loops and both directions), and
// the store's path counts (store::count_paths, as a geometric store's size index records them)
// summed over a collated batch's graphs.
#include "headroom/nn/third_order_paths.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "headroom/loader/collate.hpp"
#include "headroom/store/graph_paths.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/synthetic/synthetic_trees.hpp"
#include "test_support.hpp"

namespace headroom::nn {
namespace {

using Path = std::array<std::int64_t, 4>;

struct Graph {
  std::int64_t nodes = 0;
  std::vector<std::int64_t> source;
  std::vector<std::int64_t> target;

  at::Tensor edge_index() const {
    const auto e = static_cast<std::int64_t>(source.size());
    return torch::stack({torch::tensor(source, torch::kInt64).reshape({e}),
                         torch::tensor(target, torch::kInt64).reshape({e})});
  }
};

// 1-7 nodes, 0-16 edges drawn with replacement (so duplicates and both directions occur), about
// one in six a self-loop.
Graph random_graph(std::mt19937& rng) {
  Graph g;
  g.nodes = std::uniform_int_distribution<std::int64_t>(1, 7)(rng);
  const auto edges = std::uniform_int_distribution<int>(0, 16)(rng);
  std::uniform_int_distribution<std::int64_t> node(0, g.nodes - 1);
  for (int e = 0; e < edges; ++e) {
    const auto s = node(rng);
    const bool loop = std::uniform_int_distribution<int>(0, 5)(rng) == 0;
    g.source.push_back(s);
    g.target.push_back(loop ? s : node(rng));
  }
  return g;
}

bool distinct(const Path& q) {
  for (std::size_t a = 0; a < 4; ++a)
    for (std::size_t b = a + 1; b < 4; ++b)
      if (q[a] == q[b]) return false;
  return true;
}

// Every triple of edge columns (a: i->j, m: j->k, c: k->p) that chains, none a self-loop, with
// four distinct nodes; the middle column outermost, then the first, then the last (the documented
// order); then one v->v->v->v per node.
std::vector<Path> brute_force(const Graph& g) {
  std::vector<Path> paths;
  const std::size_t e = g.source.size();
  for (std::size_t m = 0; m < e; ++m)
    for (std::size_t a = 0; a < e; ++a)
      for (std::size_t c = 0; c < e; ++c) {
        const bool loops =
            g.source[m] == g.target[m] || g.source[a] == g.target[a] || g.source[c] == g.target[c];
        const bool chains = g.target[a] == g.source[m] && g.target[m] == g.source[c];
        const Path q{g.source[a], g.source[m], g.target[m], g.target[c]};
        if (!loops && chains && distinct(q)) paths.push_back(q);
      }
  for (std::int64_t v = 0; v < g.nodes; ++v) paths.push_back({v, v, v, v});
  return paths;
}

std::vector<Path> as_paths(const at::Tensor& rows) {
  EXPECT_EQ(rows.dim(), 2);
  EXPECT_EQ(rows.size(0), 4);
  EXPECT_EQ(rows.scalar_type(), at::kLong);
  const auto r = rows.accessor<std::int64_t, 2>();
  std::vector<Path> paths;
  for (std::int64_t n = 0; n < rows.size(1); ++n)
    paths.push_back({r[0][n], r[1][n], r[2][n], r[3][n]});
  return paths;
}

std::vector<std::int32_t> pairs(const Graph& g) {
  std::vector<std::int32_t> out;
  for (std::size_t e = 0; e < g.source.size(); ++e) {
    out.push_back(static_cast<std::int32_t>(g.source[e]));
    out.push_back(static_cast<std::int32_t>(g.target[e]));
  }
  return out;
}

TEST(ThirdOrderPaths, EqualTheBruteForceEnumerationInItsOrderOnRandomGraphs) {
  std::mt19937 rng(48);
  std::int64_t non_degenerate = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const Graph g = random_graph(rng);
    const auto expected = brute_force(g);
    EXPECT_EQ(as_paths(third_order_paths(g.edge_index(), g.nodes)), expected) << "trial " << trial;
    EXPECT_EQ(ThirdOrderPaths(g.edge_index(), g.nodes).count(),
              static_cast<std::int64_t>(expected.size()));
    non_degenerate += static_cast<std::int64_t>(expected.size()) - g.nodes;
  }
  EXPECT_GT(non_degenerate, 200);  // the graphs were dense enough to have paths to get wrong
}

TEST(ThirdOrderPaths, CountAsTheStoreCountsThem) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const Graph g = random_graph(rng);
    const auto store_count =
        store::count_paths(pairs(g), static_cast<std::uint32_t>(g.nodes)).third;
    EXPECT_EQ(ThirdOrderPaths(g.edge_index(), g.nodes).count(),
              static_cast<std::int64_t>(store_count))
        << "trial " << trial;
  }
}

TEST(ThirdOrderPaths, ADuplicatedEdgeCountsTwiceAndASelfLoopNotAtAll) {
  // 0 -> 1 -> 2 -> 3, the middle edge given twice, and a self-loop at 1.
  const Graph g{4, {0, 1, 1, 2, 1}, {1, 2, 2, 3, 1}};
  const auto paths = as_paths(third_order_paths(g.edge_index(), 4));
  const std::vector<Path> expected = {{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 0, 0, 0},
                                      {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}};
  EXPECT_EQ(paths, expected);
}

TEST(ThirdOrderPaths, ChunksConcatenateToTheWholeListAndRespectTheirBound) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 40; ++trial) {
    const Graph g = random_graph(rng);
    const auto whole = third_order_paths(g.edge_index(), g.nodes);
    const std::int64_t total = whole.size(1);
    for (const std::int64_t max_paths :
         {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{7}, total, total + 5}) {
      std::vector<at::Tensor> chunks;
      for_each_third_order_path_chunk(g.edge_index(), g.nodes, max_paths,
                                      [&chunks](const at::Tensor& c) { chunks.push_back(c); });
      const auto expected_chunks = (total + max_paths - 1) / max_paths;
      ASSERT_EQ(static_cast<std::int64_t>(chunks.size()), expected_chunks);
      for (std::size_t c = 0; c < chunks.size(); ++c) {
        const bool last = c + 1 == chunks.size();
        if (!last) {
          EXPECT_EQ(chunks[c].size(1), max_paths);
        } else {
          EXPECT_LE(chunks[c].size(1), max_paths);
        }
      }
      EXPECT_TRUE(torch::equal(torch::cat(chunks, 1), whole)) << "max_paths " << max_paths;
    }
  }
}

TEST(ThirdOrderPaths, AChunkStartRecreatesItsChunkInAnyOrder) {
  std::mt19937 rng(21);
  const Graph g = random_graph(rng);
  Graph dense = g;
  for (std::int64_t a = 0; a < 5; ++a)
    for (std::int64_t b = 0; b < 5; ++b) {
      dense.source.push_back(a);
      dense.target.push_back(b);
    }
  dense.nodes = std::max<std::int64_t>(dense.nodes, 5);
  const ThirdOrderPaths paths(dense.edge_index(), dense.nodes);
  const auto whole = third_order_paths(dense.edge_index(), dense.nodes);
  const std::int64_t max_paths = 11;
  const auto starts = paths.chunk_starts(max_paths);
  ASSERT_EQ(static_cast<std::int64_t>(starts.size()), (whole.size(1) + max_paths - 1) / max_paths);
  for (std::size_t c = starts.size(); c-- > 0;) {  // backwards: each start stands on its own
    PathCursor cursor = starts[c];
    const auto chunk = paths.next(cursor, max_paths);
    const auto begin = static_cast<std::int64_t>(c) * max_paths;
    EXPECT_TRUE(torch::equal(chunk, whole.slice(1, begin, begin + chunk.size(1)))) << c;
  }
}

TEST(ThirdOrderPaths, NoEdgesGiveOnlyTheDegeneratePathsAndNoNodesNone) {
  const auto loops = third_order_paths(torch::tensor({{0, 2}, {0, 2}}, torch::kInt64), 3);
  EXPECT_EQ(as_paths(loops), (std::vector<Path>{{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}}));
  const auto none = third_order_paths(torch::empty({2, 0}, torch::kInt64), 0);
  EXPECT_EQ(none.sizes(), (at::IntArrayRef{4, 0}));
  EXPECT_TRUE(ThirdOrderPaths(torch::empty({2, 0}, torch::kInt64), 0).chunk_starts(4).empty());
}

TEST(ThirdOrderPaths, RefuseEdgesOutsideTheNodesAndABadShape) {
  EXPECT_THROW(third_order_paths(torch::tensor({{0}, {3}}, torch::kInt64), 3), c10::Error);
  EXPECT_THROW(third_order_paths(torch::tensor({{-1}, {0}}, torch::kInt64), 3), c10::Error);
  EXPECT_THROW(third_order_paths(torch::tensor({{0}, {1}}, torch::kInt32), 3), c10::Error);
  EXPECT_THROW(third_order_paths(torch::zeros({3, 2}, torch::kInt64), 3), c10::Error);
  const ThirdOrderPaths paths(torch::tensor({{0}, {1}}, torch::kInt64), 2);
  PathCursor cursor;
  EXPECT_THROW(paths.next(cursor, 0), c10::Error);
}

TEST(ThirdOrderPaths, ABatchHasTheSumOfItsGraphsStoredCountsAndNoPathLeavesItsGraph) {
  testing::TempDir dir;
  synthetic::SyntheticTreeOptions options;
  options.trees = 12;
  options.min_nodes = 6;
  options.max_nodes = 14;
  synthetic::generate_synthetic_trees(dir / "trees", options);
  const auto store = store::GraphStore::open(dir / "trees");
  const std::vector<std::uint32_t> ids = {3, 0, 7, 7, 11, 5};
  const auto batch = loader::collate(store, ids);
  std::uint64_t stored = 0;
  for (const auto id : ids) stored += store.size_index().num_paths[3 * id + 2];
  const auto paths = third_order_paths(batch.edge_index, batch.num_nodes);
  EXPECT_EQ(paths.size(1), static_cast<std::int64_t>(stored));
  const auto graph_of = batch.batch.index_select(0, paths.reshape({-1})).reshape({4, -1});
  EXPECT_TRUE(torch::equal(graph_of, graph_of[0].expand({4, -1})));
  EXPECT_GT(paths.size(1), batch.num_nodes);  // more than the degenerate paths
}

}  // namespace
}  // namespace headroom::nn
