// collate() on geometric stores written by the project's own writer: positions, batch-global
// parents and targets against the arrays the test appended (the independent reference), with
// graphs out of order and repeated; and a store without a field gives no tensor for it.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "headroom/loader/collate.hpp"
#include "headroom/store/graph_dataset_writer.hpp"
#include "headroom/store/graph_store.hpp"
#include "test_support.hpp"

namespace headroom::loader {
namespace {

// Graph g: a path-shaped tree of 3 + g % 4 nodes whose node v hangs from v - 1 (node 0 the root),
// in D dimensions at coordinates that differ per graph and node; target g * 0.3 + 0.1.
struct SourceGraph {
  std::vector<float> features;
  std::vector<std::int64_t> edges;
  std::vector<float> positions;
  std::vector<std::int64_t> parents;
  double target = 0.0;

  SourceGraph(int g, int dimensions) : target(g * 0.3 + 0.1) {
    const int nodes = 3 + g % 4;
    for (int v = 0; v < nodes; ++v) {
      features.insert(features.end(), {0.0F, static_cast<float>(v)});
      for (int d = 0; d < dimensions; ++d)
        positions.push_back(static_cast<float>(g) + 0.5F * static_cast<float>(v * (d + 1)));
      parents.push_back(v - 1);
      if (v > 0) edges.insert(edges.end(), {v - 1, v, v, v - 1});
    }
  }
  std::int64_t nodes() const { return static_cast<std::int64_t>(parents.size()); }
};

struct Fields {
  int dimensions = 3;
  bool parents = true;
  bool target = true;
};

constexpr int kGraphs = 7;

// Every graph trains and no validation is drawn, so store graph g is appended graph g.
std::filesystem::path write_store(const testing::TempDir& dir, const std::string& name,
                                  Fields fields) {
  store::GraphDatasetOptions options;
  options.node_features = 2;
  options.validation_fraction = 0.0;
  options.position_dimensions = static_cast<std::uint32_t>(fields.dimensions);
  options.has_parents = fields.parents;
  if (fields.target) options.target_name = "tenths";
  store::GraphDatasetWriter writer(dir / name, options);
  for (int g = 0; g < kGraphs; ++g) {
    const SourceGraph source(g, fields.dimensions);
    store::GraphGeometry geometry;
    if (fields.dimensions > 0) geometry.positions = source.positions;
    if (fields.parents) geometry.parents = source.parents;
    geometry.target = source.target;
    writer.append({source.features, source.edges, {}, 0, store::DatasetSplit::kTrain}, geometry);
  }
  writer.commit();
  return dir / name;
}

const std::vector<std::uint32_t> kIds = {5, 0, 3, 3, 6, 1};

TEST(CollateGeometry, PositionsParentsAndTargetsFollowTheGraphsInBatchOrder) {
  testing::TempDir dir;
  const auto store = store::GraphStore::open(write_store(dir, "trees", {}));
  const GraphBatch b = collate(store, kIds);
  ASSERT_TRUE(b.pos.defined() && b.parent.defined() && b.target.defined());
  EXPECT_EQ(b.pos.scalar_type(), at::kFloat);
  EXPECT_EQ(b.parent.scalar_type(), at::kLong);
  EXPECT_EQ(b.target.scalar_type(), at::kFloat);
  ASSERT_EQ(b.pos.sizes(), (at::IntArrayRef{b.num_nodes, 3}));
  ASSERT_EQ(b.parent.sizes(), (at::IntArrayRef{b.num_nodes}));
  ASSERT_EQ(b.target.sizes(), (at::IntArrayRef{b.num_graphs}));
  const auto pos = b.pos.accessor<float, 2>();
  const auto parent = b.parent.accessor<std::int64_t, 1>();
  std::int64_t first = 0;
  for (std::size_t i = 0; i < kIds.size(); ++i) {
    const SourceGraph source(static_cast<int>(kIds[i]), 3);
    for (std::int64_t v = 0; v < source.nodes(); ++v) {
      for (int d = 0; d < 3; ++d) {
        EXPECT_EQ(pos[first + v][d], source.positions[static_cast<std::size_t>(3 * v + d)]);
      }
      const std::int64_t expected = v == 0 ? -1 : first + v - 1;
      EXPECT_EQ(parent[first + v], expected) << "graph " << kIds[i] << " node " << v;
    }
    EXPECT_EQ(b.target[static_cast<std::int64_t>(i)].item<float>(),
              static_cast<float>(source.target));
    first += source.nodes();
  }
  EXPECT_EQ(first, b.num_nodes);
}

TEST(CollateGeometry, AParentIsAnEdgeNeighbourInTheSameGraph) {
  testing::TempDir dir;
  const auto store = store::GraphStore::open(write_store(dir, "trees", {}));
  const GraphBatch b = collate(store, kIds);
  const auto roots = b.parent.eq(-1);
  EXPECT_EQ(roots.sum().item<std::int64_t>(), b.num_graphs);  // one root per graph
  const auto child = torch::nonzero(roots.logical_not()).squeeze(1);
  const auto parent = b.parent.index_select(0, child);
  EXPECT_TRUE(torch::equal(b.batch.index_select(0, parent), b.batch.index_select(0, child)));
  // Each (parent, child) pair is one of the batch's edges.
  const auto edge_keys = b.edge_index[0] * b.num_nodes + b.edge_index[1];
  const auto pair_keys = parent * b.num_nodes + child;
  EXPECT_TRUE(torch::isin(pair_keys, edge_keys).all().item<bool>());
}

TEST(CollateGeometry, TwoDimensionalPositionsKeepTheirWidth) {
  testing::TempDir dir;
  const auto store = store::GraphStore::open(
      write_store(dir, "plane", {.dimensions = 2, .parents = false, .target = false}));
  const GraphBatch b = collate(store, kIds);
  ASSERT_TRUE(b.pos.defined());
  EXPECT_EQ(b.pos.sizes(), (at::IntArrayRef{b.num_nodes, 2}));
  EXPECT_FALSE(b.parent.defined());
  EXPECT_FALSE(b.target.defined());
  const SourceGraph last(static_cast<int>(kIds.back()), 2);
  const auto tail = b.pos.slice(0, b.num_nodes - last.nodes()).contiguous();
  const std::vector<float> got(tail.data_ptr<float>(), tail.data_ptr<float>() + tail.numel());
  EXPECT_EQ(got, last.positions);
}

TEST(CollateGeometry, AStoreWithoutGeometryGivesNoGeometricTensors) {
  testing::TempDir dir;
  const auto store = store::GraphStore::open(
      write_store(dir, "plain", {.dimensions = 0, .parents = false, .target = false}));
  const GraphBatch b = collate(store, kIds);
  EXPECT_FALSE(b.pos.defined());
  EXPECT_FALSE(b.parent.defined());
  EXPECT_FALSE(b.target.defined());
  EXPECT_EQ(b.bytes(),
            b.num_nodes * 2 * 4 + b.num_edges * 2 * 8 + b.num_nodes * 8 + 2 * b.num_graphs * 8);
}

TEST(CollateGeometry, BytesCountTheGeometricTensors) {
  testing::TempDir dir;
  const auto store = store::GraphStore::open(write_store(dir, "trees", {}));
  const GraphBatch b = collate(store, kIds);
  const std::int64_t n = b.num_nodes;
  const std::int64_t plain = n * 2 * 4 + b.num_edges * 2 * 8 + n * 8 + 2 * b.num_graphs * 8;
  EXPECT_EQ(b.bytes(), plain + n * 3 * 4 + n * 8 + b.num_graphs * 4);
}

TEST(CollateGeometry, ToMovesTheGeometricTensors) {
  testing::TempDir dir;
  const auto store = store::GraphStore::open(write_store(dir, "trees", {}));
  const GraphBatch b = collate(store, kIds);
  const GraphBatch same = b.to(torch::Device(torch::kCPU));
  EXPECT_EQ(same.pos.data_ptr(), b.pos.data_ptr());
  // The meta device holds no data, so a tensor there was moved, not kept.
  const GraphBatch meta = b.to(torch::Device(torch::kMeta));
  EXPECT_TRUE(meta.pos.is_meta());
  EXPECT_TRUE(meta.parent.is_meta());
  EXPECT_TRUE(meta.target.is_meta());
  EXPECT_EQ(meta.pos.sizes(), b.pos.sizes());
  EXPECT_EQ(meta.target.sizes(), b.target.sizes());
}

TEST(CollateGeometry, ToCudaCopiesTheGeometricTensors) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  testing::TempDir dir;
  const auto store = store::GraphStore::open(write_store(dir, "trees", {}));
  const GraphBatch b = collate(store, kIds);
  const GraphBatch gpu = b.to(torch::Device(torch::kCUDA));
  EXPECT_TRUE(torch::equal(gpu.pos.cpu(), b.pos));
  EXPECT_TRUE(torch::equal(gpu.parent.cpu(), b.parent));
  EXPECT_TRUE(torch::equal(gpu.target.cpu(), b.target));
  EXPECT_EQ(gpu.bytes(), b.bytes());
}

}  // namespace
}  // namespace headroom::loader
