// BatchPrefetcher: the same batches as direct collation, in order; errors surface from next();
// early destruction and a depth of one neither hang nor lose batches.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "headroom/loader/batch_prefetcher.hpp"
#include "headroom/loader/epoch_order.hpp"
#include "headroom/store/graph_store.hpp"
#include "test_support.hpp"

namespace headroom::loader {
namespace {

class BatchPrefetcherTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<testing::TempDir>();
    store_ = std::make_unique<store::GraphStore>(
        store::GraphStore::open(testing::build_synthetic_store(dir_->path(), 20'000, 9)));
  }
  static void TearDownTestSuite() {
    store_.reset();
    dir_.reset();
  }

  static const store::GraphStore& store() { return *store_; }

  // Every graph of the store, shuffled, in batches of `batch_size`.
  static std::vector<std::vector<std::uint32_t>> batches(std::size_t batch_size) {
    std::vector<std::uint32_t> ids(store().num_graphs());
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::uint32_t>(i);
    return chunk(shuffled(ids, 3, 0), batch_size);
  }

  static inline std::unique_ptr<testing::TempDir> dir_;
  static inline std::unique_ptr<store::GraphStore> store_;
};

void expect_same_batch(const GraphBatch& a, const GraphBatch& b) {
  EXPECT_EQ(a.num_graphs, b.num_graphs);
  EXPECT_EQ(a.num_nodes, b.num_nodes);
  EXPECT_EQ(a.num_edges, b.num_edges);
  EXPECT_TRUE(torch::equal(a.x, b.x));
  EXPECT_TRUE(torch::equal(a.edge_index, b.edge_index));
  EXPECT_EQ(a.edge_attr.defined(), b.edge_attr.defined());
  if (a.edge_attr.defined() && b.edge_attr.defined()) {
    EXPECT_TRUE(torch::equal(a.edge_attr, b.edge_attr));
  }
  EXPECT_TRUE(torch::equal(a.batch, b.batch));
  EXPECT_TRUE(torch::equal(a.y, b.y));
  EXPECT_TRUE(torch::equal(a.graph_ids, b.graph_ids));
}

TEST_F(BatchPrefetcherTest, YieldsTheDirectlyCollatedBatchesInOrder) {
  const auto plan = batches(16);
  ASSERT_GE(plan.size(), 4U);
  const CollateOptions options{.edge_features = true};
  BatchPrefetcher prefetcher(store(), plan, options, 2);
  EXPECT_EQ(prefetcher.size(), plan.size());
  for (std::size_t i = 0; i < plan.size(); ++i) {
    SCOPED_TRACE(i);
    auto batch = prefetcher.next();
    ASSERT_TRUE(batch.has_value());
    expect_same_batch(*batch, collate(store(), plan[i], options));
  }
  EXPECT_FALSE(prefetcher.next().has_value());
  EXPECT_FALSE(prefetcher.next().has_value());
  EXPECT_GE(prefetcher.wait_seconds(), 0.0);
}

TEST_F(BatchPrefetcherTest, DepthOneStillDeliversEverything) {
  const auto plan = batches(5);
  BatchPrefetcher prefetcher(store(), plan, {}, 1);
  std::size_t count = 0;
  while (auto batch = prefetcher.next()) {
    ASSERT_LT(count, plan.size());
    const std::vector<std::int64_t> expected(plan[count].begin(), plan[count].end());
    EXPECT_TRUE(torch::equal(batch->graph_ids, torch::tensor(expected, torch::kInt64)));
    ++count;
  }
  EXPECT_EQ(count, plan.size());
}

TEST_F(BatchPrefetcherTest, RethrowsACollationErrorFromNext) {
  const auto bad = static_cast<std::uint32_t>(store().num_graphs());
  const std::vector<std::vector<std::uint32_t>> plan = {{0, 1}, {2}, {3, bad}, {4}};
  BatchPrefetcher prefetcher(store(), plan, {}, 4);
  // Batches before the failing one still arrive.
  auto first = prefetcher.next();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->num_graphs, 2);
  auto second = prefetcher.next();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->graph_ids[0].item<std::int64_t>(), 2);
  EXPECT_THROW(prefetcher.next(), std::out_of_range);
  // The stream stays failed rather than silently skipping the bad batch.
  EXPECT_THROW(prefetcher.next(), std::out_of_range);
}

TEST_F(BatchPrefetcherTest, DestroyedAfterOneBatchDoesNotHang) {
  // Many batches and a small depth: the producer is blocked on a full queue when the consumer
  // stops, so destruction must wake it.
  auto plan = batches(2);
  for (int repeat = 0; repeat < 3; ++repeat) {
    const auto more = batches(2);
    plan.insert(plan.end(), more.begin(), more.end());
  }
  {
    BatchPrefetcher prefetcher(store(), plan, {}, 2);
    ASSERT_TRUE(prefetcher.next().has_value());
  }
  { BatchPrefetcher untouched(store(), plan, {}, 1); }
  SUCCEED();
}

TEST_F(BatchPrefetcherTest, NoBatchesEndsImmediately) {
  BatchPrefetcher prefetcher(store(), {}, {}, 3);
  EXPECT_EQ(prefetcher.size(), 0U);
  EXPECT_FALSE(prefetcher.next().has_value());
}

TEST_F(BatchPrefetcherTest, ZeroDepthIsRejected) {
  EXPECT_THROW(BatchPrefetcher(store(), batches(8), {}, 0), std::invalid_argument);
}

}  // namespace
}  // namespace headroom::loader
