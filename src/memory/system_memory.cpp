#include "headroom/memory/system_memory.hpp"

#include <unistd.h>

#include <algorithm>

#include "headroom/memory/host_memory_limit.hpp"

namespace headroom::memory {

std::optional<std::int64_t> cgroup_memory_limit_bytes() {
  std::optional<std::int64_t> smallest;
  for (const auto& limit : detect_host_memory_limit().limits)
    if (limit.name.rfind("cgroup", 0) == 0)
      smallest = std::min(smallest.value_or(limit.bytes), limit.bytes);
  return smallest;
}

std::int64_t physical_ram_bytes() {
  return static_cast<std::int64_t>(sysconf(_SC_PHYS_PAGES)) *
         static_cast<std::int64_t>(sysconf(_SC_PAGE_SIZE));
}

std::int64_t host_memory_limit_bytes() { return detect_host_memory_limit().bytes; }

}  // namespace headroom::memory
