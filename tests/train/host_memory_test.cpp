// The host memory of a run: the queue items the plan derives equal the bytes collate() really
// allocates, the baseline and the anonymous RSS are real readings, and the RSS watch stops a run
// past its host budget with a message saying where and how to go on.
#include "headroom/train/context/host_memory.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "headroom/loader/collate.hpp"
#include "headroom/memory/anonymous_rss.hpp"
#include "test_support.hpp"

namespace headroom::train {
namespace {

const memory::HostPlanItem& item(const memory::HostMemoryPlan& plan, const std::string& prefix) {
  for (const auto& i : plan.items)
    if (i.name.rfind(prefix, 0) == 0) return i;
  throw std::runtime_error("no plan item " + prefix);
}

// The ids of the `count` training graphs with the most nodes.
std::vector<std::uint32_t> largest_training_graphs(const store::GraphStore& store,
                                                   std::size_t count) {
  const auto index = store.size_index();
  std::vector<std::uint32_t> ids(store.train_ids().begin(), store.train_ids().end());
  std::sort(ids.begin(), ids.end(), [&](std::uint32_t a, std::uint32_t b) {
    return index.num_nodes[a] > index.num_nodes[b];
  });
  ids.resize(std::min(count, ids.size()));
  return ids;
}

TEST(HostMemory, PrefetchQueueIsDepthPlusOneCollatedBatchesOfTheLargestGraphs) {
  testing::TempDir dir;
  const auto store = store::GraphStore::open(testing::build_synthetic_store(dir.path(), 20000));
  TrainingConfig config;
  config.run.store = store.path();
  config.optimisation.batch_size = 8;
  config.run.prefetch_depth = 3;
  memory::HostMemoryBudget budget;
  budget.bytes = std::int64_t{1} << 40;  // nothing to adapt
  budget.source = "test";
  const auto plan = plan_run_host_memory(config, store, budget);
  ASSERT_TRUE(plan.fits);
  EXPECT_EQ(plan.prefetch_depth, 3);

  // The 8 graphs with the most nodes; the bound takes the most edges separately, so it is at
  // least what collate() allocates for them, and equal when they also have the most edges.
  const auto ids = largest_training_graphs(store, 8);
  const auto batch = loader::collate(store, ids);
  const auto queue = item(plan, "prefetch queue (3 + 1 batches)").bytes;
  EXPECT_GE(queue, 4.0 * static_cast<double>(batch.bytes()));
  const auto index = store.size_index();
  double edges_of_these = 0;
  for (const auto id : ids) edges_of_these += index.num_edges[id];
  std::vector<double> all_edges;
  for (const auto id : store.train_ids()) all_edges.push_back(index.num_edges[id]);
  std::sort(all_edges.rbegin(), all_edges.rend());
  const double most_edges = std::accumulate(all_edges.begin(), all_edges.begin() + 8, 0.0);
  EXPECT_DOUBLE_EQ(
      queue, 4.0 * (static_cast<double>(batch.bytes()) + 16.0 * (most_edges - edges_of_these)));
}

TEST(HostMemory, AnonymousRssGrowsWithTouchedMemoryAndBoundsTheBaseline) {
  const auto before = memory::process_anonymous_rss_bytes();
  std::vector<char> block(std::size_t{64} << 20);
  std::memset(block.data(), 1, block.size());
  const auto after = memory::process_anonymous_rss_bytes();
  EXPECT_GE(after - before, std::int64_t{60} << 20);
  EXPECT_GT(host_baseline_bytes(), 0.0);
  EXPECT_LE(host_baseline_bytes(), static_cast<double>(memory::process_anonymous_rss_bytes()));
  EXPECT_EQ(block[block.size() - 1], 1);
}

TEST(HostMemory, TheWatchStopsPastTheBudgetSayingWhereAndHowToGoOn) {
  memory::HostMemoryBudget budget;
  budget.bytes = 1;
  budget.source = "95% of the cgroup v2 memory.max (/sys/fs/cgroup/job/memory.max) limit";
  try {
    check_host_memory(budget, "epoch 2 step 7", "run the same command again to resume");
    FAIL() << "an RSS above 1 byte passed the watch";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("crossed the host budget 1 B (95% of the cgroup v2 memory.max "
                           "(/sys/fs/cgroup/job/memory.max) limit) at epoch 2 step 7"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("run the same command again to resume"), std::string::npos);
  }
  budget.bytes = std::int64_t{1} << 50;
  EXPECT_NO_THROW(check_host_memory(budget, "epoch 1 step 1", ""));
}

TEST(HostMemory, DefaultBudgetIsBelowTheDetectedLimit) {
  const auto budget = host_memory_budget(MemoryOptions{});
  EXPECT_EQ(budget.bytes,
            static_cast<std::int64_t>(static_cast<double>(budget.limit.bytes) * 0.95));
  MemoryOptions too_much;
  too_much.host_budget = budget.limit.bytes + 1;
  EXPECT_THROW(host_memory_budget(too_much), std::invalid_argument);
}

}  // namespace
}  // namespace headroom::train
