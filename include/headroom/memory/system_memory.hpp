// How much memory this process may use: the machine's physical RAM, lowered by a cgroup limit
// when there is one (SLURM and containers confine jobs with cgroups: the OOM killer acts at the
// cgroup's limit, not at the machine's RAM). Thread-safe; reads /proc and /sys on every call.
// Shorthands of detect_host_memory_limit() (host_memory_limit.hpp), which says which source set it.
#pragma once

#include <cstdint>
#include <optional>

namespace headroom::memory {

std::int64_t physical_ram_bytes();
// The smallest memory.max (v2) or memory.limit_in_bytes (v1) of this process's cgroup and its
// parents; nullopt when there is no limit or it cannot be read.
std::optional<std::int64_t> cgroup_memory_limit_bytes();
// min(physical RAM, cgroup limit, RLIMIT_AS, RLIMIT_DATA, SLURM's grant).
std::int64_t host_memory_limit_bytes();

}  // namespace headroom::memory
