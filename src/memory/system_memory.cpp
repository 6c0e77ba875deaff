#include "headroom/memory/system_memory.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <string>

namespace headroom::memory {
namespace {

std::optional<std::int64_t> read_limit(const std::string& file) {
  std::ifstream in(file);
  std::string text;
  if (!in || !(in >> text) || text == "max") return std::nullopt;
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value <= 0) return std::nullopt;
  // cgroup v1 reports "no limit" as a huge page-aligned number.
  if (value >= (std::int64_t{1} << 62)) return std::nullopt;
  return value;
}

}  // namespace

// The cgroup path of this process: the "0::/path" line (v2) or the memory controller's line (v1).
std::optional<std::int64_t> cgroup_memory_limit_bytes() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const auto controllers = line.substr(first + 1, second - first - 1);
    const auto path = line.substr(second + 1);
    if (line.compare(0, first, "0") == 0 && controllers.empty()) {
      if (auto limit = read_limit("/sys/fs/cgroup" + path + "/memory.max")) return limit;
      if (auto limit = read_limit("/sys/fs/cgroup/memory.max")) return limit;
    } else if (controllers.find("memory") != std::string::npos) {
      if (auto limit = read_limit("/sys/fs/cgroup/memory" + path + "/memory.limit_in_bytes"))
        return limit;
      if (auto limit = read_limit("/sys/fs/cgroup/memory/memory.limit_in_bytes")) return limit;
    }
  }
  return std::nullopt;
}

std::int64_t physical_ram_bytes() {
  return static_cast<std::int64_t>(sysconf(_SC_PHYS_PAGES)) *
         static_cast<std::int64_t>(sysconf(_SC_PAGE_SIZE));
}

std::int64_t host_memory_limit_bytes() {
  const auto ram = physical_ram_bytes();
  const auto limit = cgroup_memory_limit_bytes();
  return limit ? std::min(ram, *limit) : ram;
}

}  // namespace headroom::memory
