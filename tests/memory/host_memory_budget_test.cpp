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

}  // namespace
}  // namespace headroom::memory
