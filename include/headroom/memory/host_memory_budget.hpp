// The host memory budget a run keeps to: --host-memory-budget when given, else the detected host
// memory limit (host_memory_limit.hpp) less a safety margin. An explicit budget above the limit is
// refused: the kernel would kill the run before the budget could be reached.
#pragma once

#include <cstdint>
#include <string>

#include "headroom/memory/host_memory_limit.hpp"

namespace headroom::memory {

// Share of the detected limit the default budget leaves unplanned. The limit counts what no plan
// item sees: page tables and kernel memory charged to the cgroup, thread stacks, glibc's free
// lists outside the counting allocator. 5% is 200 MiB of a 4 GiB job and 3.2 GiB of a 64 GiB one,
// more than the process's untracked overhead measured in either (docs/memory.md, "Host memory").
inline constexpr double kHostSafetyMargin = 0.05;

struct HostMemoryBudget {
  std::int64_t bytes = 0;
  std::string source;     // "--host-memory-budget", or "95% of <limit source>"
  HostMemoryLimit limit;  // what was detected
};

// `requested`: --host-memory-budget in bytes, 0 for the default. Throws std::invalid_argument
// naming both numbers and the limit's source when `requested` exceeds the limit.
HostMemoryBudget resolve_host_memory_budget(std::int64_t requested, const HostMemoryLimit& limit);

}  // namespace headroom::memory
