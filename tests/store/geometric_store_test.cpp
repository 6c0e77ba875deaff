// Geometric stores (docs/store-format.md, "Geometric stores"): positions, tree parents, per-graph
// path counts and a float target written through GraphDatasetWriter read back in store order
// (training graphs first); stores without them keep their old form; bad geometry is refused by
// graph number with nothing left behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "headroom/store/graph_dataset_writer.hpp"
#include "headroom/store/graph_paths.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/store/store_arrays.hpp"
#include "headroom/util/file_reader.hpp"
#include "test_support.hpp"

namespace headroom::store {
namespace {

namespace fs = std::filesystem;

// A tree of `nodes` nodes in 3-D: node v's parent is (v - 1) / 2 (a binary heap), an undirected
// edge to it, node v at (v, g, v * g) with identity 0, target g / 10.
struct Tree {
  std::vector<float> features;
  std::vector<std::int64_t> edges;
  std::vector<float> positions;
  std::vector<std::int64_t> parents;
  double target = 0.0;

  Tree(int nodes, int g) : target(g / 10.0) {
    for (int v = 0; v < nodes; ++v) {
      features.push_back(0.0F);
      positions.insert(positions.end(),
                       {static_cast<float>(v), static_cast<float>(g), static_cast<float>(v * g)});
      parents.push_back(v == 0 ? -1 : (v - 1) / 2);
      if (v > 0) edges.insert(edges.end(), {(v - 1) / 2, v, v, (v - 1) / 2});
    }
  }
  DatasetGraph graph(DatasetSplit split) const { return {features, edges, {}, 0, split}; }
  GraphGeometry geometry() const { return {positions, parents, target}; }
};

GraphDatasetOptions tree_options() {
  GraphDatasetOptions o;
  o.validation_fraction = 0.0;
  o.position_dimensions = 3;
  o.has_parents = true;
  o.target_name = "depth_tenths";
  o.target_unit = "none";
  return o;
}

std::vector<std::int32_t> narrow(const std::vector<std::int64_t>& values) {
  return {values.begin(), values.end()};
}

TEST(GeometricStore, PositionsParentsPathCountsAndTargetsReadBackInStoreOrder) {
  testing::TempDir dir;
  {
    GraphDatasetWriter writer(dir / "trees", tree_options());
    for (int g = 0; g < 6; ++g) {  // graphs 1 and 4 are test graphs: the store puts them last
      const Tree tree(3 + g, g);
      const auto split = g == 1 || g == 4 ? DatasetSplit::kTest : DatasetSplit::kTrain;
      writer.append(tree.graph(split), tree.geometry());
    }
    writer.commit();
  }
  const auto store = GraphStore::open(dir / "trees", StoreVerification::kFull);
  EXPECT_EQ(store.metadata().position_dimensions, 3U);
  EXPECT_TRUE(store.metadata().has_parents);
  EXPECT_EQ(store.metadata().target_name, "depth_tenths");
  const std::vector<int> append_order_of_store_graph = {0, 2, 3, 5, 1, 4};
  const auto index = store.size_index();
  ASSERT_EQ(index.num_paths.size(), 6U * kPathOrders);
  ASSERT_EQ(index.target.size(), 6U);
  for (std::size_t id = 0; id < 6; ++id) {
    const int g = append_order_of_store_graph[id];
    const Tree expected(3 + g, g);
    const auto view = store.graph(id);
    EXPECT_TRUE(std::ranges::equal(view.positions, expected.positions)) << id;
    EXPECT_TRUE(std::ranges::equal(view.parents, expected.parents)) << id;
    const PathCounts paths = count_paths(narrow(expected.edges), static_cast<std::uint32_t>(3 + g));
    EXPECT_EQ(index.num_paths[3 * id], paths.first) << id;
    EXPECT_EQ(index.num_paths[3 * id + 1], paths.second) << id;
    EXPECT_EQ(index.num_paths[3 * id + 2], paths.third) << id;
    EXPECT_EQ(index.target[id], expected.target) << id;
  }
  // Graph 5, a heap of 8 nodes, counted by hand: its 3-edge paths have middle edges 0-1, 0-2 and
  // 1-3 with 2 each (the ends' other neighbours), 6 both ways is 12, plus the 8 nodes' own.
  EXPECT_EQ(index.num_paths[3 * 3 + 2], 20U);
}

TEST(GeometricStore, AStoreWithoutGeometryKeepsItsOldFormAndLoads) {
  testing::TempDir dir;
  {
    GraphDatasetOptions plain;
    GraphDatasetWriter writer(dir / "plain", plain);
    const Tree tree(4, 0);
    writer.append(tree.graph(DatasetSplit::kTrain));
    writer.commit();
  }
  const auto store = GraphStore::open(dir / "plain", StoreVerification::kFull);
  EXPECT_EQ(store.metadata().position_dimensions, 0U);
  EXPECT_TRUE(store.size_index().num_paths.empty());
  EXPECT_TRUE(store.graph(0).positions.empty());
  const std::string manifest = util::read_file(dir / "plain" / "manifest.json");
  EXPECT_EQ(manifest.find("geometry"), std::string::npos);
  EXPECT_EQ(manifest.find(arrays::kNodePositions), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "plain" / "node_positions.f32"));
}

// Appends `tree` with `geometry` changed by `edit` and returns what the writer said.
template <typename Edit>
std::string refusal(GraphDatasetWriter& writer, Edit edit) {
  Tree tree(5, 1);
  edit(tree);
  try {
    writer.append(tree.graph(DatasetSplit::kTrain), tree.geometry());
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(GeometricStore, BadGeometryIsRefusedByGraphNumberAndNothingIsLeft) {
  testing::TempDir dir;
  {
    GraphDatasetWriter writer(dir / "trees", tree_options());
    writer.append(Tree(5, 0).graph(DatasetSplit::kTrain), Tree(5, 0).geometry());
    EXPECT_EQ(refusal(writer, [](Tree& t) { t.positions.clear(); }),
              "graph 1: 0 position values for 5 nodes of 3 dimensions");
    EXPECT_EQ(refusal(writer, [](Tree& t) { t.positions[4] = std::nanf(""); }),
              "graph 1: a position is not finite (NaN or infinite)");
    EXPECT_EQ(
        refusal(writer, [](Tree& t) { t.positions[0] = std::numeric_limits<float>::infinity(); }),
        "graph 1: a position is not finite (NaN or infinite)");
    EXPECT_EQ(refusal(writer, [](Tree& t) { t.parents[3] = 5; }),
              "graph 1: node 3: its parent 5 is outside the graph's 5 nodes (a root's parent is "
              "-1)");
    EXPECT_EQ(refusal(writer, [](Tree& t) { t.parents[0] = 4; }),  // 0 -> 4 -> 1 -> 0
              "graph 1: node 0: following parents from it comes back to it (a cycle of 3 nodes); "
              "a tree's parents end at a root");
    EXPECT_EQ(refusal(writer, [](Tree& t) { t.target = std::nan(""); }),
              "graph 1: target nan is not finite");
    EXPECT_EQ(writer.graphs(), 1U);
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

// A circulant graph: node v linked both ways to v +- 1 .. v +- 50 (mod n). Its 2nd-order paths
// (n * 100 * 99) fit the store's uint32 counter; its 3rd-order paths do not.
TEST(GeometricStore, AGraphWhoseThirdOrderPathsOverflowTheCounterIsRefused) {
  constexpr int kNodes = 5000;
  constexpr int kReach = 50;
  std::vector<std::int64_t> edges;
  for (int v = 0; v < kNodes; ++v)
    for (int d = 1; d <= kReach; ++d)
      edges.insert(edges.end(), {v, (v + d) % kNodes, (v + d) % kNodes, v});
  const PathCounts counts = count_paths(narrow(edges), kNodes);
  ASSERT_LE(counts.second, std::numeric_limits<std::uint32_t>::max());
  ASSERT_GT(counts.third, std::numeric_limits<std::uint32_t>::max());
  std::vector<float> features(kNodes, 0.0F);
  std::vector<float> positions(3 * kNodes, 0.5F);
  std::vector<std::int64_t> no_parents;
  testing::TempDir dir;
  {
    GraphDatasetOptions options = tree_options();
    options.has_parents = false;
    GraphDatasetWriter writer(dir / "dense", options);
    try {
      writer.append({features, edges, {}, 0, DatasetSplit::kTrain}, {positions, no_parents, 1.0});
      FAIL() << "a graph past the path counter was written";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()),
                "graph 0: " + std::to_string(counts.third) +
                    " 3rd-order paths overflow the store's path counter (uint32, at most "
                    "4294967295); a graph this dense is past any memory budget for a path-based "
                    "encoder");
    }
    EXPECT_EQ(writer.graphs(), 0U);
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

}  // namespace
}  // namespace headroom::store
