#include "headroom/memory/host_memory_limit.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>

namespace headroom::memory {
namespace {

namespace fs = std::filesystem;

// A whole decimal number, or nullopt.
std::optional<std::int64_t> parse_integer(const std::string& text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

// Out of line: GCC 12 at -O3 reports false array-bounds overflows when a string built from a
// literal is inlined into a vector's growth.
[[gnu::noinline]] void add_ignored(HostMemoryLimit& out, std::string_view reason) {
  out.ignored.emplace_back(reason);
}

[[gnu::noinline]] void add_limit(HostMemoryLimit& out, std::string_view name, std::int64_t bytes) {
  out.limits.push_back({std::string(name), bytes});
}

// Whether a comma-separated controller list of /proc/self/cgroup names `controller`.
bool has_controller(std::string_view list, std::string_view controller) {
  while (!list.empty()) {
    const auto comma = std::min(list.find(','), list.size());
    if (list.substr(0, comma) == controller) return true;
    list.remove_prefix(std::min(comma + 1, list.size()));
  }
  return false;
}

// The path below the cgroup mount, e.g. "/job_42/step_0", as the probe's root sees it.
fs::path shown(const HostProbe& probe, const fs::path& file) {
  return "/" / file.lexically_relative(probe.root);
}

// One cgroup limit file: adds its limit, or its reason to `ignored`; a missing file (the root
// cgroup has none) says nothing. v1 writes "no limit" as a huge page-aligned number, v2 as "max".
void read_cgroup_file(const HostProbe& probe, const fs::path& file, const std::string& kind,
                      HostMemoryLimit& out) {
  if (!fs::exists(file)) return;
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  const auto value_text = trimmed(text.str());
  const auto name = kind + " (" + shown(probe, file).string() + ")";
  if (!in) {
    add_ignored(out, name + ": cannot be read");
    return;
  }
  if (value_text == "max") return;
  const auto value = parse_integer(value_text);
  if (!value || *value <= 0) {
    add_ignored(out, name + ": '" + value_text + "' is not a positive byte count");
    return;
  }
  if (*value >= (std::int64_t{1} << 62)) return;
  add_limit(out, name, *value);
}

// Every level from the hierarchy's root down to the process's cgroup: a parent's limit binds its
// children (SLURM sets it on the job; the step's own cgroup may say "max").
void read_cgroup_levels(const HostProbe& probe, const fs::path& mount, const std::string& cgroup,
                        const std::string& file_name, const std::string& kind,
                        HostMemoryLimit& out) {
  fs::path level = mount;
  read_cgroup_file(probe, level / file_name, kind, out);
  for (const auto& part : fs::path(cgroup).relative_path()) {
    if (part.empty() || part == "." || part == "..") continue;
    level /= part;
    read_cgroup_file(probe, level / file_name, kind, out);
  }
}

// /proc/self/cgroup: "0::/path" is the v2 hierarchy; a line naming the memory controller is v1's.
void read_cgroup_limits(const HostProbe& probe, HostMemoryLimit& out) {
  std::ifstream in(probe.root / "proc/self/cgroup");
  const auto cgroup_root = (probe.root / "sys/fs/cgroup").lexically_normal();
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const auto controllers = std::string_view(line).substr(first + 1, second - first - 1);
    const auto path = line.substr(second + 1);
    if (line.compare(0, first, "0") == 0 && controllers.empty())
      read_cgroup_levels(probe, cgroup_root, path, "memory.max", "cgroup v2 memory.max", out);
    else if (has_controller(controllers, "memory"))
      read_cgroup_levels(probe, cgroup_root / "memory", path, "memory.limit_in_bytes",
                         "cgroup v1 memory.limit_in_bytes", out);
  }
}

void read_rlimits(const HostProbe& probe, HostMemoryLimit& out) {
  if (!probe.soft_rlimit) return;
  if (const auto as = probe.soft_rlimit(RLIMIT_AS)) add_limit(out, "RLIMIT_AS", *as);
  if (const auto data = probe.soft_rlimit(RLIMIT_DATA)) add_limit(out, "RLIMIT_DATA", *data);
}

// A SLURM variable in MB; nullopt (with the reason in `ignored`) when unset or malformed.
std::optional<std::int64_t> slurm_number(const HostProbe& probe, const std::string& name,
                                         HostMemoryLimit& out) {
  if (!probe.environment) return std::nullopt;
  const auto text = probe.environment(name);
  if (!text) return std::nullopt;
  const auto value = parse_integer(trimmed(*text));
  if (!value || *value < 0) {
    add_ignored(out, name + ": '" + *text + "' is not a whole number");
    return std::nullopt;
  }
  return value;
}

void read_slurm_limits(const HostProbe& probe, HostMemoryLimit& out) {
  constexpr std::int64_t kMegabyte = std::int64_t{1} << 20;  // SLURM's "MB" are MiB
  if (const auto per_node = slurm_number(probe, "SLURM_MEM_PER_NODE", out)) {
    if (*per_node == 0)
      add_ignored(out, "SLURM_MEM_PER_NODE: 0 grants the node's whole memory (no limit)");
    else
      add_limit(out, "SLURM_MEM_PER_NODE", *per_node * kMegabyte);
  }
  const auto per_cpu = slurm_number(probe, "SLURM_MEM_PER_CPU", out);
  if (!per_cpu) return;
  const auto cpus = slurm_number(probe, "SLURM_CPUS_ON_NODE", out);
  if (!cpus || *cpus == 0 || *per_cpu == 0) {
    add_ignored(out,
                "SLURM_MEM_PER_CPU: needs SLURM_CPUS_ON_NODE and both non-zero to give a limit");
    return;
  }
  add_limit(out, "SLURM_MEM_PER_CPU x SLURM_CPUS_ON_NODE", *per_cpu * *cpus * kMegabyte);
}

}  // namespace

HostProbe system_host_probe() {
  HostProbe probe;
  probe.environment = [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
  probe.soft_rlimit = [](int resource) -> std::optional<std::int64_t> {
    rlimit limit{};
    if (getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
    return static_cast<std::int64_t>(limit.rlim_cur);
  };
  probe.physical_ram_bytes = static_cast<std::int64_t>(sysconf(_SC_PHYS_PAGES)) *
                             static_cast<std::int64_t>(sysconf(_SC_PAGE_SIZE));
  return probe;
}

HostMemoryLimit detect_host_memory_limit(const HostProbe& probe) {
  HostMemoryLimit out;
  add_limit(out, "physical RAM", probe.physical_ram_bytes);
  read_cgroup_limits(probe, out);
  read_rlimits(probe, out);
  read_slurm_limits(probe, out);
  // The first of equal limits wins: physical RAM, then the cgroup, as listed.
  const auto smallest = std::min_element(
      out.limits.begin(), out.limits.end(),
      [](const HostLimitSource& a, const HostLimitSource& b) { return a.bytes < b.bytes; });
  out.bytes = smallest->bytes;
  out.source = smallest->name;
  return out;
}

HostMemoryLimit detect_host_memory_limit() { return detect_host_memory_limit(system_host_probe()); }

}  // namespace headroom::memory
