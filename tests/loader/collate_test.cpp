// collate() against an independent reference: the concatenation of the store's zero-copy
// per-graph tensors, with the edge indices shifted by hand.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "headroom/loader/collate.hpp"
#include "headroom/loader/graph_tensors.hpp"
#include "headroom/store/graph_store.hpp"
#include "test_support.hpp"

namespace headroom::loader {
namespace {

// One small synthetic store shared by the suite: the tests only read it.
class Collate : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<testing::TempDir>();
    store_ = std::make_unique<store::GraphStore>(
        store::GraphStore::open(testing::build_synthetic_store(dir_->path(), 20'000, 5)));
  }
  static void TearDownTestSuite() {
    store_.reset();
    dir_.reset();
  }

  static const store::GraphStore& store() { return *store_; }

  static std::vector<std::uint32_t> random_ids(std::size_t count, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::uint32_t> pick(
        0, static_cast<std::uint32_t>(store().num_graphs() - 1));
    std::vector<std::uint32_t> ids(count);
    for (auto& id : ids) id = pick(rng);
    return ids;
  }

  static inline std::unique_ptr<testing::TempDir> dir_;
  static inline std::unique_ptr<store::GraphStore> store_;
};

bool bit_equal(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  const auto ca = a.contiguous();
  const auto cb = b.contiguous();
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

// What collate must produce, built from per-graph tensors with ordinary tensor operations.
struct Reference {
  at::Tensor x, edge_index, edge_attr, batch, y, graph_ids;
};

Reference reference(const store::GraphStore& store, const std::vector<std::uint32_t>& ids) {
  std::vector<at::Tensor> xs, edges, attrs, batch;
  std::vector<std::int64_t> ys, graph_ids;
  std::int64_t first_node = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto g = loader::graph_tensors(store, ids[i]);
    xs.push_back(g.x);
    edges.push_back(g.edge_index.to(torch::kInt64) + first_node);
    attrs.push_back(g.edge_attr);
    batch.push_back(torch::full({g.x.size(0)}, static_cast<std::int64_t>(i), torch::kInt64));
    ys.push_back(g.y);
    graph_ids.push_back(ids[i]);
    first_node += g.x.size(0);
  }
  Reference r;
  r.x = torch::cat(xs, 0);
  r.edge_index = torch::cat(edges, 1);
  r.edge_attr = torch::cat(attrs, 0);
  r.batch = torch::cat(batch, 0);
  r.y = torch::tensor(ys, torch::kInt64);
  r.graph_ids = torch::tensor(graph_ids, torch::kInt64);
  return r;
}

void expect_matches_reference(const GraphBatch& b, const store::GraphStore& store,
                              const std::vector<std::uint32_t>& ids, bool edge_features) {
  const Reference r = reference(store, ids);
  EXPECT_EQ(b.num_graphs, static_cast<std::int64_t>(ids.size()));
  EXPECT_EQ(b.num_nodes, r.x.size(0));
  EXPECT_EQ(b.num_edges, r.edge_index.size(1));
  EXPECT_TRUE(bit_equal(b.x, r.x));
  EXPECT_TRUE(bit_equal(b.edge_index, r.edge_index));
  EXPECT_TRUE(bit_equal(b.batch, r.batch));
  EXPECT_TRUE(bit_equal(b.y, r.y));
  EXPECT_TRUE(bit_equal(b.graph_ids, r.graph_ids));
  if (edge_features) {
    ASSERT_TRUE(b.edge_attr.defined());
    EXPECT_TRUE(bit_equal(b.edge_attr, r.edge_attr));
  } else {
    EXPECT_FALSE(b.edge_attr.defined());
  }
}

TEST_F(Collate, TheStoreIsLargeEnoughToMeanSomething) {
  ASSERT_GE(store().num_graphs(), 50U);
  std::uint64_t attacks = 0;
  for (const auto label : store().size_index().label) attacks += label;
  EXPECT_GT(attacks, 0U);  // y must be checked on both labels
}

TEST_F(Collate, EqualsConcatenatedGraphTensorsWithoutEdgeFeatures) {
  const auto ids = random_ids(64, 1);
  const GraphBatch b = collate(store(), ids);
  EXPECT_EQ(b.x.scalar_type(), torch::kFloat32);
  EXPECT_EQ(b.x.size(1), static_cast<std::int64_t>(store().metadata().node_feature_count));
  EXPECT_EQ(b.edge_index.scalar_type(), torch::kInt64);
  EXPECT_EQ(b.edge_index.size(0), 2);
  expect_matches_reference(b, store(), ids, false);
}

TEST_F(Collate, EqualsConcatenatedGraphTensorsWithEdgeFeatures) {
  const auto ids = random_ids(64, 2);
  const GraphBatch b = collate(store(), ids, {.edge_features = true});
  EXPECT_EQ(b.edge_attr.size(1), static_cast<std::int64_t>(store().metadata().edge_feature_count));
  expect_matches_reference(b, store(), ids, true);
}

TEST_F(Collate, EdgeIndicesPointIntoTheirOwnGraph) {
  const auto ids = random_ids(32, 3);
  const GraphBatch b = collate(store(), ids);
  // Every edge joins two nodes of the same graph, and every node of that graph lies in the range
  // the batch vector assigns to it.
  const auto source_graph = b.batch.index_select(0, b.edge_index[0]);
  const auto target_graph = b.batch.index_select(0, b.edge_index[1]);
  EXPECT_TRUE(torch::equal(source_graph, target_graph));
  // Node positions per graph are consecutive and in order.
  const auto counts = torch::bincount(b.batch, {}, b.num_graphs);
  for (std::int64_t i = 0; i < b.num_graphs; ++i) {
    EXPECT_EQ(
        counts[i].item<std::int64_t>(),
        static_cast<std::int64_t>(store().graph(ids[static_cast<std::size_t>(i)]).num_nodes()));
  }
  EXPECT_TRUE(torch::all(b.batch.diff() >= 0).item<bool>());
}

TEST_F(Collate, DuplicateIdsAreCopiedAgainWithTheirOwnOffsets) {
  const std::uint32_t g = 7;
  const std::uint32_t h = 2;
  const std::vector<std::uint32_t> ids = {g, h, g, g};
  const GraphBatch b = collate(store(), ids, {.edge_features = true});
  expect_matches_reference(b, store(), ids, true);

  const auto n = static_cast<std::int64_t>(store().graph(g).num_nodes());
  const auto e = static_cast<std::int64_t>(store().graph(g).num_edges());
  const auto nh = static_cast<std::int64_t>(store().graph(h).num_nodes());
  const auto eh = static_cast<std::int64_t>(store().graph(h).num_edges());
  ASSERT_GT(e, 0);
  // The third graph (second copy of g) starts after g and h.
  const auto first = b.edge_index.narrow(1, 0, e);
  const auto third = b.edge_index.narrow(1, e + eh, e);
  EXPECT_TRUE(torch::equal(third, first + (n + nh)));
  EXPECT_TRUE(torch::equal(b.x.narrow(0, n + nh, n), b.x.narrow(0, 0, n)));
  EXPECT_EQ(b.graph_ids[3].item<std::int64_t>(), g);
}

TEST_F(Collate, OutOfRangeIdThrowsNamingIdAndCount) {
  const auto count = static_cast<std::uint32_t>(store().num_graphs());
  const std::vector<std::uint32_t> ids = {0, count};
  try {
    collate(store(), ids);
    FAIL() << "no exception";
  } catch (const std::out_of_range& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(std::to_string(count)), std::string::npos) << message;
    EXPECT_NE(message.find("graphs"), std::string::npos) << message;
  }
  const std::vector<std::uint32_t> far = {0xFFFFFFFFU};
  EXPECT_THROW(collate(store(), far), std::out_of_range);
  const std::vector<std::uint32_t> last = {count - 1};
  EXPECT_NO_THROW(collate(store(), last));
}

TEST_F(Collate, EmptyIdListGivesAnEmptyBatch) {
  const GraphBatch b = collate(store(), {}, {.edge_features = true});
  EXPECT_EQ(b.num_graphs, 0);
  EXPECT_EQ(b.num_nodes, 0);
  EXPECT_EQ(b.num_edges, 0);
  EXPECT_EQ(b.x.sizes(), (std::vector<std::int64_t>{
                             0, static_cast<std::int64_t>(store().metadata().node_feature_count)}));
  EXPECT_EQ(b.edge_index.sizes(), (std::vector<std::int64_t>{2, 0}));
  EXPECT_EQ(b.edge_attr.size(0), 0);
  EXPECT_EQ(b.batch.numel(), 0);
  EXPECT_EQ(b.y.numel(), 0);
  EXPECT_EQ(b.graph_ids.numel(), 0);
  EXPECT_EQ(b.bytes(), 0);
}

TEST_F(Collate, PinnedRequestGivesTheSameValues) {
  const auto ids = random_ids(16, 4);
  const GraphBatch b = collate(store(), ids, {.edge_features = true, .pin_memory = true});
  expect_matches_reference(b, store(), ids, true);
  EXPECT_EQ(b.x.is_pinned(), at::hasCUDA());
}

TEST_F(Collate, BytesCountsEveryTensor) {
  const auto ids = random_ids(10, 5);
  const GraphBatch without = collate(store(), ids);
  const GraphBatch with = collate(store(), ids, {.edge_features = true});
  const std::int64_t n = without.num_nodes;
  const std::int64_t e = without.num_edges;
  const std::int64_t nf = store().metadata().node_feature_count;
  const std::int64_t ef = store().metadata().edge_feature_count;
  const std::int64_t base = n * nf * 4 + 2 * e * 8 + n * 8 + 10 * 8 + 10 * 8;
  EXPECT_EQ(without.bytes(), base);
  EXPECT_EQ(with.bytes(), base + e * ef * 4);
}

TEST_F(Collate, ToTheSameDeviceKeepsTheTensors) {
  const auto ids = random_ids(8, 6);
  const GraphBatch b = collate(store(), ids);
  const GraphBatch moved = b.to(torch::Device(torch::kCPU));
  EXPECT_EQ(moved.x.data_ptr(), b.x.data_ptr());
  EXPECT_EQ(moved.edge_index.data_ptr(), b.edge_index.data_ptr());
  EXPECT_FALSE(moved.edge_attr.defined());
  EXPECT_EQ(moved.num_nodes, b.num_nodes);
}

TEST_F(Collate, GraphIdsStayReadableOnTheHost) {
  const auto ids = random_ids(12, 8);
  const GraphBatch b = collate(store(), ids);
  ASSERT_TRUE(b.host_graph_ids.defined());
  EXPECT_TRUE(b.host_graph_ids.is_cpu());
  EXPECT_EQ(b.host_graph_ids.data_ptr(), b.graph_ids.data_ptr());  // no copy on the host
  EXPECT_EQ(b.to(torch::Device(torch::kCPU)).host_graph_ids.data_ptr(), b.graph_ids.data_ptr());
  // graph_id_list reads the host copy, not graph_ids (which would sit on the device).
  GraphBatch elsewhere = b;
  elsewhere.graph_ids = torch::full_like(b.graph_ids, -1);
  const auto listed = elsewhere.graph_id_list();
  ASSERT_EQ(listed.size(), ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(listed[i], ids[i]);
}

TEST_F(Collate, ToCudaCopiesEverything) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const auto ids = random_ids(32, 7);
  const GraphBatch b = collate(store(), ids, {.edge_features = true, .pin_memory = true});
  const GraphBatch gpu = b.to(torch::Device(torch::kCUDA), true);
  torch::cuda::synchronize();
  EXPECT_TRUE(gpu.x.is_cuda());
  EXPECT_TRUE(gpu.edge_attr.is_cuda());
  EXPECT_TRUE(torch::equal(gpu.x.cpu(), b.x));
  EXPECT_TRUE(torch::equal(gpu.edge_index.cpu(), b.edge_index));
  EXPECT_TRUE(torch::equal(gpu.edge_attr.cpu(), b.edge_attr));
  EXPECT_TRUE(torch::equal(gpu.batch.cpu(), b.batch));
  EXPECT_TRUE(torch::equal(gpu.y.cpu(), b.y));
  EXPECT_TRUE(torch::equal(gpu.graph_ids.cpu(), b.graph_ids));
  EXPECT_TRUE(gpu.host_graph_ids.is_cpu());
  EXPECT_TRUE(torch::equal(gpu.host_graph_ids, b.graph_ids));
  EXPECT_EQ(gpu.bytes(), b.bytes());
}

}  // namespace
}  // namespace headroom::loader
