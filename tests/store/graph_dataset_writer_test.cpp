// A graph dataset that is not CAN traffic, written through GraphDatasetWriter: it opens and passes
// the full value check as a store, reads back exactly, and malformed graphs are refused by number
// with nothing left behind.
#include "headroom/store/graph_dataset_writer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "headroom/store/graph_store.hpp"
#include "test_support.hpp"

namespace headroom::store {
namespace {

namespace fs = std::filesystem;

// A path graph of `nodes` nodes with 2 features (identity node % 3, then the node number) and one
// edge feature (the source's number).
struct PathGraph {
  std::vector<float> features;
  std::vector<std::int64_t> edges;
  std::vector<float> edge_features;

  explicit PathGraph(int nodes) {
    for (int node = 0; node < nodes; ++node) {
      features.push_back(static_cast<float>(node % 3));
      features.push_back(static_cast<float>(node));
      if (node + 1 < nodes) {
        edges.insert(edges.end(), {node, node + 1});
        edge_features.push_back(static_cast<float>(node));
      }
    }
  }
  DatasetGraph view(std::uint8_t label, DatasetSplit split) const {
    return {features, edges, edge_features, label, split};
  }
};

GraphDatasetOptions options() {
  GraphDatasetOptions o;
  o.node_features = 2;
  o.edge_features = 1;
  o.identity_classes = 3;
  o.validation_fraction = 0.25;
  o.seed = 3;
  return o;
}

TEST(GraphDatasetWriter, AWrittenDatasetOpensVerifiesAndReadsBackExactly) {
  testing::TempDir dir;
  {
    GraphDatasetWriter writer(dir / "paths", options());
    for (int g = 0; g < 12; ++g)
      writer.append(
          PathGraph(3 + g).view(g % 2, g >= 8 ? DatasetSplit::kTest : DatasetSplit::kTrain));
    writer.commit();
  }
  const auto store = GraphStore::open(dir / "paths", StoreVerification::kFull);
  ASSERT_EQ(store.num_graphs(), 12U);
  EXPECT_EQ(identity_classes(store.metadata()), 3U);
  EXPECT_EQ(store.metadata().node_features.identity, graph::NodeIdentity::kGiven);
  for (std::size_t g = 0; g < 12; ++g) {
    const PathGraph expected(3 + static_cast<int>(g));
    const auto view = store.graph(g);
    EXPECT_TRUE(std::ranges::equal(view.node_features, expected.features)) << g;
    EXPECT_TRUE(std::ranges::equal(view.edge_features, expected.edge_features)) << g;
    ASSERT_EQ(view.edge_index.size(), expected.edges.size());
    for (std::size_t k = 0; k < expected.edges.size(); ++k)
      EXPECT_EQ(view.edge_index[k], expected.edges[k]);
    EXPECT_EQ(view.label, g % 2);
  }
  EXPECT_EQ(store.test_ids().size(), 4U);
  EXPECT_EQ(store.train_ids().size() + store.validation_ids().size(), 8U);
  EXPECT_EQ(store.validation_ids().size(), 2U);
}

TEST(GraphDatasetWriter, AMalformedGraphIsRefusedByNumberAndAnUncommittedStoreLeavesNothing) {
  testing::TempDir dir;
  {
    GraphDatasetWriter writer(dir / "paths", options());
    writer.append(PathGraph(4).view(0, DatasetSplit::kTrain));
    PathGraph outside(4);
    outside.edges[3] = 9;
    try {
      writer.append(outside.view(0, DatasetSplit::kTrain));
      FAIL() << "an edge outside its graph was written";
    } catch (const std::invalid_argument& e) {
      EXPECT_STREQ(e.what(), "graph 1: edge 1 has target node 9, outside the graph's 4 nodes");
    }
    PathGraph identity(4);
    identity.features[2] = 3.0F;  // node 1's identity, of 3 classes
    EXPECT_THROW(writer.append(identity.view(0, DatasetSplit::kTrain)), std::invalid_argument);
    EXPECT_THROW(writer.append(PathGraph(4).view(2, DatasetSplit::kTrain)), std::invalid_argument);
    EXPECT_EQ(writer.graphs(), 1U);
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

// Edges without features are an [edges, 0] array: its row count comes from the edges, not from
// its (zero) bytes.
TEST(GraphDatasetWriter, ADatasetWithoutEdgeFeaturesOpensWithItsEdges) {
  testing::TempDir dir;
  GraphDatasetOptions no_edge_features = options();
  no_edge_features.edge_features = 0;
  {
    GraphDatasetWriter writer(dir / "paths", no_edge_features);
    for (int g = 0; g < 4; ++g) {
      PathGraph graph(3 + g);
      graph.edge_features.clear();
      writer.append(graph.view(g % 2, DatasetSplit::kTrain));
    }
    writer.commit();
  }
  const auto store = GraphStore::open(dir / "paths", StoreVerification::kFull);
  EXPECT_EQ(store.metadata().edge_feature_count, 0U);
  EXPECT_EQ(store.metadata().arrays.at("edge_features").shape,
            (std::vector<std::uint64_t>{2 + 3 + 4 + 5, 0}));
  EXPECT_EQ(store.graph(3).num_edges(), 5U);
  EXPECT_TRUE(store.graph(3).edge_features.empty());
}

TEST(GraphDatasetWriter, ADatasetWithoutTrainingGraphsIsRefused) {
  testing::TempDir dir;
  GraphDatasetWriter writer(dir / "paths", options());
  writer.append(PathGraph(4).view(1, DatasetSplit::kTest));
  EXPECT_THROW(writer.commit(), std::invalid_argument);
}

}  // namespace
}  // namespace headroom::store
