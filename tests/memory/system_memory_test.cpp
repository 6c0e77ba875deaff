#include "headroom/memory/system_memory.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace headroom::memory {
namespace {

// /proc/meminfo's MemTotal is an independent reading of the same quantity (kB, a little below
// the page count times the page size: the kernel's own reservations are excluded).
std::int64_t meminfo_total_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string name;
  std::int64_t kilobytes = 0;
  std::string unit;
  while (in >> name >> kilobytes >> unit)
    if (name == "MemTotal:") return kilobytes * 1024;
  return 0;
}

TEST(SystemMemory, PhysicalRamAgreesWithMeminfo) {
  const auto meminfo = meminfo_total_bytes();
  ASSERT_GT(meminfo, 0);
  const auto ram = physical_ram_bytes();
  EXPECT_GE(ram, meminfo * 9 / 10);
  EXPECT_LE(ram, meminfo * 11 / 10);
}

TEST(SystemMemory, HostLimitIsTheSmallerOfRamAndTheCgroupLimit) {
  const auto limit = host_memory_limit_bytes();
  EXPECT_GT(limit, 0);
  EXPECT_LE(limit, physical_ram_bytes());
  if (const auto cgroup = cgroup_memory_limit_bytes()) {
    EXPECT_GT(*cgroup, 0);
    EXPECT_EQ(limit, std::min(physical_ram_bytes(), *cgroup));
  } else {
    EXPECT_EQ(limit, physical_ram_bytes());
  }
}

}  // namespace
}  // namespace headroom::memory
