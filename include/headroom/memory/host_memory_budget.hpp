// The host memory budget a run keeps to: --host-memory-budget when given, else the detected host
// memory limit (host_memory_limit.hpp) less a safety margin. An explicit budget above the limit is
// refused: the kernel would kill the run before the budget could be reached. When several ranks of
// a data-parallel run share the machine, the default is this rank's share of the limits they share
// (physical RAM, the cgroup's, SLURM's grant); a per-process limit (RLIMIT_AS, RLIMIT_DATA) is each
// rank's own. An explicit budget is taken as it is: it is the rank's already.
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
  // "--host-memory-budget", or "95% of the <limit source> limit" (with ", shared by N ranks on
  // this node" when the default is a share)
  std::string source;
  HostMemoryLimit limit;  // what was detected
};

// Whether every process on the machine counts against `source` (physical RAM, a cgroup, SLURM's
// grant), rather than each process separately (the rlimits).
bool limit_shared_by_the_node(const HostLimitSource& source);

// `requested`: --host-memory-budget in bytes, 0 for the default. `ranks_on_node`: the run's
// processes on this machine (util::ProcessRole::ranks_on_node), which divide the default. Throws
// std::invalid_argument naming both numbers and the limit's source when `requested` exceeds the
// limit.
HostMemoryBudget resolve_host_memory_budget(std::int64_t requested, const HostMemoryLimit& limit,
                                            int ranks_on_node = 1);

}  // namespace headroom::memory
