// The host memory limit from fake cgroup trees, rlimits and SLURM environments: which source sets
// it, that parents bind their children, and that malformed sources are skipped with their reason.
#include "headroom/memory/host_memory_limit.hpp"

#include <gtest/gtest.h>

#include <map>

#include "test_support.hpp"

namespace headroom::memory {
namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

class HostMemoryLimitTest : public ::testing::Test {
 protected:
  HostProbe probe() const {
    HostProbe p;
    p.root = dir_.path();
    p.environment = [this](const std::string& name) -> std::optional<std::string> {
      const auto found = environment_.find(name);
      if (found == environment_.end()) return std::nullopt;
      return found->second;
    };
    p.soft_rlimit = [this](int resource) -> std::optional<std::int64_t> {
      const auto found = rlimits_.find(resource);
      if (found == rlimits_.end()) return std::nullopt;
      return found->second;
    };
    p.physical_ram_bytes = 16 * kGiB;
    return p;
  }
  void write(const std::string& relative, const std::string& content) const {
    testing::write_text_file(dir_.path() / relative, content);
  }

  testing::TempDir dir_;
  std::map<std::string, std::string> environment_;
  std::map<int, std::int64_t> rlimits_;
};

TEST_F(HostMemoryLimitTest, WithoutAnySourceItIsThePhysicalRam) {
  const auto limit = detect_host_memory_limit(probe());
  EXPECT_EQ(limit.bytes, 16 * kGiB);
  EXPECT_EQ(limit.source, "physical RAM");
  ASSERT_EQ(limit.limits.size(), 1U);
  EXPECT_TRUE(limit.ignored.empty());
}

TEST_F(HostMemoryLimitTest, CgroupV2ParentLimitBindsAChildThatSaysMax) {
  write("proc/self/cgroup", "0::/job_1/step_0\n");
  write("sys/fs/cgroup/job_1/memory.max", "4294967296\n");
  write("sys/fs/cgroup/job_1/step_0/memory.max", "max\n");
  const auto limit = detect_host_memory_limit(probe());
  EXPECT_EQ(limit.bytes, 4 * kGiB);
  EXPECT_EQ(limit.source, "cgroup v2 memory.max (/sys/fs/cgroup/job_1/memory.max)");
  EXPECT_EQ(limit.limits.size(), 2U);  // physical RAM and the parent's
}

TEST_F(HostMemoryLimitTest, CgroupV2TheSmallestLevelWins) {
  write("proc/self/cgroup", "0::/a/b\n");
  write("sys/fs/cgroup/a/memory.max", "8589934592");
  write("sys/fs/cgroup/a/b/memory.max", "3221225472\n");
  const auto limit = detect_host_memory_limit(probe());
  EXPECT_EQ(limit.bytes, 3 * kGiB);
  EXPECT_EQ(limit.source, "cgroup v2 memory.max (/sys/fs/cgroup/a/b/memory.max)");
}

TEST_F(HostMemoryLimitTest, CgroupV1MemoryControllerAndItsUnlimitedRoot) {
  write("proc/self/cgroup", "5:cpu,cpuacct:/other\n4:memory:/slurm/uid_1/job_2\n0::/\n");
  write("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  write("sys/fs/cgroup/memory/slurm/uid_1/job_2/memory.limit_in_bytes", "2147483648\n");
  const auto limit = detect_host_memory_limit(probe());
  EXPECT_EQ(limit.bytes, 2 * kGiB);
  EXPECT_EQ(limit.source,
            "cgroup v1 memory.limit_in_bytes "
            "(/sys/fs/cgroup/memory/slurm/uid_1/job_2/memory.limit_in_bytes)");
  EXPECT_TRUE(limit.ignored.empty());
}

TEST_F(HostMemoryLimitTest, MalformedCgroupFileIsIgnoredWithItsReason) {
  write("proc/self/cgroup", "0::/job\n");
  write("sys/fs/cgroup/job/memory.max", "lots\n");
  const auto limit = detect_host_memory_limit(probe());
  EXPECT_EQ(limit.source, "physical RAM");
  ASSERT_EQ(limit.ignored.size(), 1U);
  EXPECT_EQ(limit.ignored[0],
            "cgroup v2 memory.max (/sys/fs/cgroup/job/memory.max): 'lots' is not a positive byte "
            "count");
}

TEST_F(HostMemoryLimitTest, NegativeAndZeroCgroupValuesAreIgnored) {
  write("proc/self/cgroup", "0::/job\n");
  write("sys/fs/cgroup/job/memory.max", "-5\n");
  EXPECT_EQ(detect_host_memory_limit(probe()).ignored.size(), 1U);
  write("sys/fs/cgroup/job/memory.max", "0\n");
  EXPECT_EQ(detect_host_memory_limit(probe()).bytes, 16 * kGiB);
}

TEST_F(HostMemoryLimitTest, SlurmMemoryPerNodeIsInMebibytes) {
  environment_["SLURM_MEM_PER_NODE"] = "1024";
  const auto limit = detect_host_memory_limit(probe());
  EXPECT_EQ(limit.bytes, kGiB);
  EXPECT_EQ(limit.source, "SLURM_MEM_PER_NODE");
}

TEST_F(HostMemoryLimitTest, SlurmMemoryPerCpuTimesCpusOnNode) {
  environment_["SLURM_MEM_PER_CPU"] = "512";
  environment_["SLURM_CPUS_ON_NODE"] = "6";
  const auto limit = detect_host_memory_limit(probe());
  EXPECT_EQ(limit.bytes, 3 * kGiB);
  EXPECT_EQ(limit.source, "SLURM_MEM_PER_CPU x SLURM_CPUS_ON_NODE");
}

TEST_F(HostMemoryLimitTest, SlurmValuesThatGiveNoLimitAreIgnoredWithTheirReason) {
  environment_["SLURM_MEM_PER_NODE"] = "12G";
  environment_["SLURM_MEM_PER_CPU"] = "512";
  auto limit = detect_host_memory_limit(probe());
  EXPECT_EQ(limit.source, "physical RAM");
  ASSERT_EQ(limit.ignored.size(), 2U);
  EXPECT_EQ(limit.ignored[0], "SLURM_MEM_PER_NODE: '12G' is not a whole number");
  EXPECT_EQ(limit.ignored[1],
            "SLURM_MEM_PER_CPU: needs SLURM_CPUS_ON_NODE and both non-zero to give a limit");

  environment_ = {{"SLURM_MEM_PER_NODE", "0"}};
  limit = detect_host_memory_limit(probe());
  EXPECT_EQ(limit.bytes, 16 * kGiB);
  ASSERT_EQ(limit.ignored.size(), 1U);
  EXPECT_EQ(limit.ignored[0], "SLURM_MEM_PER_NODE: 0 grants the node's whole memory (no limit)");
}

TEST_F(HostMemoryLimitTest, RlimitsCountAndTheSmallestOfAllSourcesWins) {
  write("proc/self/cgroup", "0::/job\n");
  write("sys/fs/cgroup/job/memory.max", "4294967296\n");
  environment_["SLURM_MEM_PER_NODE"] = "3072";
  rlimits_[RLIMIT_DATA] = 5 * kGiB;
  EXPECT_EQ(detect_host_memory_limit(probe()).source, "SLURM_MEM_PER_NODE");
  rlimits_[RLIMIT_AS] = 2 * kGiB;
  const auto limit = detect_host_memory_limit(probe());
  EXPECT_EQ(limit.bytes, 2 * kGiB);
  EXPECT_EQ(limit.source, "RLIMIT_AS");
  EXPECT_EQ(limit.limits.size(), 5U);
}

TEST(HostMemoryLimitOfThisProcess, AgreesWithGetrlimitAndTheRam) {
  const auto limit = detect_host_memory_limit();
  EXPECT_GT(limit.bytes, 0);
  EXPECT_LE(limit.bytes, system_host_probe().physical_ram_bytes);
  rlimit as{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &as), 0);
  if (as.rlim_cur != RLIM_INFINITY) {
    EXPECT_LE(limit.bytes, static_cast<std::int64_t>(as.rlim_cur));
  }
}

}  // namespace
}  // namespace headroom::memory
