// The host budget: the detected limit less the margin by default, the flag when it fits under
// the limit, and an error naming both numbers and the source when it does not.
#include "headroom/memory/host_memory_budget.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace headroom::memory {
namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

HostMemoryLimit cgroup_limit() {
  HostMemoryLimit limit;
  limit.bytes = 4 * kGiB;
  limit.source = "cgroup v2 memory.max (/sys/fs/cgroup/job/memory.max)";
  limit.limits = {{"physical RAM", 16 * kGiB}, {limit.source, limit.bytes}};
  return limit;
}

TEST(HostMemoryBudget, DefaultIsTheLimitLessTheMargin) {
  const auto budget = resolve_host_memory_budget(0, cgroup_limit());
  EXPECT_EQ(budget.bytes, static_cast<std::int64_t>(4.0 * kGiB * 0.95));
  EXPECT_EQ(budget.source, "95% of the cgroup v2 memory.max (/sys/fs/cgroup/job/memory.max) limit");
  EXPECT_EQ(budget.limit.bytes, 4 * kGiB);
}

TEST(HostMemoryBudget, AFlagUpToTheLimitIsTaken) {
  const auto budget = resolve_host_memory_budget(4 * kGiB, cgroup_limit());
  EXPECT_EQ(budget.bytes, 4 * kGiB);
  EXPECT_EQ(budget.source, "--host-memory-budget");
}

TEST(HostMemoryBudget, AFlagAboveTheLimitNamesBothNumbersAndTheSource) {
  try {
    resolve_host_memory_budget(8 * kGiB, cgroup_limit());
    FAIL() << "8 GiB over a 4 GiB limit was accepted";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("--host-memory-budget 8.00 GiB"), std::string::npos) << message;
    EXPECT_NE(message.find("limit 4.00 GiB"), std::string::npos) << message;
    EXPECT_NE(message.find("/sys/fs/cgroup/job/memory.max"), std::string::npos) << message;
  }
}

TEST(HostMemoryBudget, TheDefaultIsThisRanksShareOfTheNodesLimit) {
  const auto budget = resolve_host_memory_budget(0, cgroup_limit(), 2);
  EXPECT_EQ(budget.bytes, static_cast<std::int64_t>(2.0 * kGiB * 0.95));
  EXPECT_EQ(budget.source,
            "95% of the cgroup v2 memory.max (/sys/fs/cgroup/job/memory.max) limit, shared by 2 "
            "ranks on this node");
  EXPECT_EQ(budget.limit.bytes, 4 * kGiB) << "the limit itself is the node's";
  EXPECT_EQ(resolve_host_memory_budget(0, cgroup_limit(), 1).bytes,
            static_cast<std::int64_t>(4.0 * kGiB * 0.95))
      << "one rank: the whole limit, as before";
}

TEST(HostMemoryBudget, APerProcessLimitIsNotShared) {
  // RLIMIT_AS bounds each rank on its own: 3 GiB each stays 3 GiB, smaller than a quarter of the
  // 16 GiB of RAM only when there are more than 5 ranks.
  HostMemoryLimit limit;
  limit.bytes = 3 * kGiB;
  limit.source = "RLIMIT_AS";
  limit.limits = {{"physical RAM", 16 * kGiB}, {"RLIMIT_AS", 3 * kGiB}};
  auto budget = resolve_host_memory_budget(0, limit, 4);
  EXPECT_EQ(budget.bytes, static_cast<std::int64_t>(3.0 * kGiB * 0.95));
  EXPECT_EQ(budget.source, "95% of the RLIMIT_AS limit");
  budget = resolve_host_memory_budget(0, limit, 8);
  EXPECT_EQ(budget.bytes, static_cast<std::int64_t>(2.0 * kGiB * 0.95));
  EXPECT_EQ(budget.source, "95% of the physical RAM limit, shared by 8 ranks on this node");
  EXPECT_FALSE(limit_shared_by_the_node({"RLIMIT_DATA", kGiB}));
  EXPECT_TRUE(limit_shared_by_the_node({"SLURM_MEM_PER_NODE", kGiB}));
}

TEST(HostMemoryBudget, AnExplicitBudgetIsNotShared) {
  const auto budget = resolve_host_memory_budget(3 * kGiB, cgroup_limit(), 4);
  EXPECT_EQ(budget.bytes, 3 * kGiB);
  EXPECT_EQ(budget.source, "--host-memory-budget");
}

}  // namespace
}  // namespace headroom::memory
