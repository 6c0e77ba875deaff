// The host memory limit a process actually runs under: the smallest of the machine's physical
// RAM, its cgroup's memory limit (v2 memory.max, v1 memory.limit_in_bytes, at its own level or any
// parent's: SLURM and containers confine jobs with cgroups, and the OOM killer acts at the
// cgroup's limit, not at the machine's RAM), the soft RLIMIT_AS and RLIMIT_DATA, and the memory
// SLURM granted the job (SLURM_MEM_PER_NODE, or SLURM_MEM_PER_CPU x SLURM_CPUS_ON_NODE, in MB).
// Every source that sets a limit is listed, the smallest is the limit, and a source present but
// unreadable or malformed is ignored with its reason, so `headroom plan` can say why.
// What is read comes through a HostProbe, so tests feed fake cgroup trees and environments.
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace headroom::memory {

// Where the detector reads. system_host_probe() is the running process's.
struct HostProbe {
  // /proc/self/cgroup and /sys/fs/cgroup/... are read under this directory ("/" for real).
  std::filesystem::path root = "/";
  // An environment variable's value, nullopt when unset.
  std::function<std::optional<std::string>(const std::string& name)> environment;
  // A resource limit's soft value in bytes (RLIMIT_AS, RLIMIT_DATA), nullopt when unlimited.
  std::function<std::optional<std::int64_t>(int resource)> soft_rlimit;
  std::int64_t physical_ram_bytes = 0;  // bytes; sysconf's pages x page size for real
};
HostProbe system_host_probe();

struct HostLimitSource {
  std::string name;  // e.g. "cgroup v2 memory.max (/sys/fs/cgroup/job/memory.max)", "RLIMIT_AS"
  std::int64_t bytes = 0;
};

struct HostMemoryLimit {
  std::int64_t bytes = 0;               // the smallest limit found (physical RAM at most)
  std::string source;                   // the name of the source that set it
  std::vector<HostLimitSource> limits;  // every limit found, physical RAM first
  std::vector<std::string> ignored;     // "what: why" for each source skipped as malformed
};

HostMemoryLimit detect_host_memory_limit(const HostProbe& probe);
HostMemoryLimit detect_host_memory_limit();  // of this process (system_host_probe())

}  // namespace headroom::memory
