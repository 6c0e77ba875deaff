#include "headroom/distributed/launch_environment.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <stdexcept>

namespace headroom::distributed {
namespace {

long long parse_number(const std::string& text, const char* name) {
  long long value = 0;
  const auto* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end || text.empty())
    throw std::invalid_argument(
        fmt::format("environment variable {}='{}' is not a whole number", name, text));
  return value;
}

int required_int(const EnvironmentLookup& lookup, const char* name, const char* launcher) {
  const auto text = lookup(name);
  if (!text)
    throw std::invalid_argument(
        fmt::format("{} launch: environment variable {} is not set", launcher, name));
  return static_cast<int>(parse_number(*text, name));
}

int optional_int(const EnvironmentLookup& lookup, const char* name, int fallback) {
  const auto text = lookup(name);
  return text ? static_cast<int>(parse_number(*text, name)) : fallback;
}

void check_rank(const LaunchEnvironment& env) {
  if (env.world_size < 1 || env.rank < 0 || env.rank >= env.world_size || env.local_rank < 0 ||
      env.local_world_size < 1 || env.local_world_size > env.world_size)
    throw std::invalid_argument(fmt::format(
        "{} launch: rank {} (local {} of {} on this node) of world size {}",
        to_string(env.launcher), env.rank, env.local_rank, env.local_world_size, env.world_size));
}

// The tasks srun placed on this node: the step's distribution (what srun started), else the
// job's, at this node's index; else the requested --ntasks-per-node; else this task alone.
int slurm_local_world_size(const EnvironmentLookup& lookup) {
  const int node_id = optional_int(lookup, "SLURM_NODEID", 0);
  for (const char* name : {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}) {
    if (const auto list = lookup(name)) {
      try {
        return slurm_tasks_on_node(*list, node_id);
      } catch (const std::invalid_argument& error) {
        throw std::invalid_argument(fmt::format("environment variable {}: {}", name, error.what()));
      }
    }
  }
  return optional_int(lookup, "SLURM_NTASKS_PER_NODE", 1);
}

LaunchEnvironment torchrun(const EnvironmentLookup& lookup) {
  LaunchEnvironment env;
  env.launcher = Launcher::kTorchrun;
  env.rank = required_int(lookup, "RANK", "torchrun");
  env.world_size = required_int(lookup, "WORLD_SIZE", "torchrun");
  env.local_rank = optional_int(lookup, "LOCAL_RANK", 0);
  env.local_world_size = optional_int(lookup, "LOCAL_WORLD_SIZE", 1);
  env.master_addr = lookup("MASTER_ADDR").value_or("127.0.0.1");
  env.master_port = required_int(lookup, "MASTER_PORT", "torchrun");
  return env;
}

LaunchEnvironment slurm(const EnvironmentLookup& lookup) {
  LaunchEnvironment env;
  env.launcher = Launcher::kSlurm;
  env.rank = required_int(lookup, "SLURM_PROCID", "SLURM");
  // The step's tasks, where srun sets them; the job's otherwise.
  env.world_size = lookup("SLURM_STEP_NUM_TASKS")
                       ? required_int(lookup, "SLURM_STEP_NUM_TASKS", "SLURM")
                       : required_int(lookup, "SLURM_NTASKS", "SLURM");
  env.local_rank = optional_int(lookup, "SLURM_LOCALID", 0);
  env.local_world_size = slurm_local_world_size(lookup);
  if (auto addr = lookup("MASTER_ADDR")) {
    env.master_addr = *addr;
  } else {
    const auto nodes = lookup("SLURM_STEP_NODELIST") ? lookup("SLURM_STEP_NODELIST")
                                                     : lookup("SLURM_JOB_NODELIST");
    if (!nodes)
      throw std::invalid_argument(
          "SLURM launch: neither MASTER_ADDR nor SLURM_JOB_NODELIST is set");
    env.master_addr = first_slurm_host(*nodes);
  }
  if (lookup("MASTER_PORT")) {
    env.master_port = required_int(lookup, "MASTER_PORT", "SLURM");
  } else {
    const auto job = lookup("SLURM_JOB_ID");
    if (!job)
      throw std::invalid_argument("SLURM launch: neither MASTER_PORT nor SLURM_JOB_ID is set");
    env.master_port = slurm_rendezvous_port(parse_number(*job, "SLURM_JOB_ID"));
  }
  return env;
}

}  // namespace

const char* to_string(Launcher launcher) {
  switch (launcher) {
    case Launcher::kTorchrun:
      return "torchrun";
    case Launcher::kSlurm:
      return "SLURM";
    case Launcher::kNone:
      break;
  }
  return "none";
}

LaunchEnvironment detect_launch(const EnvironmentLookup& lookup) {
  LaunchEnvironment env;
  if (lookup("RANK") && lookup("WORLD_SIZE"))
    env = torchrun(lookup);
  else if (lookup("SLURM_PROCID") && lookup("SLURM_STEP_ID"))
    env = slurm(lookup);
  else
    return env;
  check_rank(env);
  if (env.master_port <= 0 || env.master_port > 65535)
    throw std::invalid_argument(fmt::format("{} launch: port {} is not a TCP port",
                                            to_string(env.launcher), env.master_port));
  return env;
}

LaunchEnvironment detect_launch_from_environment() {
  return detect_launch([](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read at start-up
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  });
}

std::string first_slurm_host(std::string_view node_list) {
  // The first entry ends at the first comma outside brackets.
  std::size_t end = 0;
  int depth = 0;
  for (; end < node_list.size(); ++end) {
    if (node_list[end] == '[') ++depth;
    if (node_list[end] == ']') --depth;
    if (node_list[end] == ',' && depth == 0) break;
  }
  const auto entry = node_list.substr(0, end);
  const auto open = entry.find('[');
  if (entry.empty() ||
      (open == std::string_view::npos) != (entry.find(']') == std::string_view::npos))
    throw std::invalid_argument(fmt::format("SLURM node list '{}' is malformed", node_list));
  if (open == std::string_view::npos) return std::string(entry);
  // prefix[03-05,09]suffix: the first number of the range list, zero padding kept.
  const auto ranges = entry.substr(open + 1, entry.find(']') - open - 1);
  const auto first = ranges.substr(0, ranges.find_first_of(",-"));
  if (first.empty())
    throw std::invalid_argument(fmt::format("SLURM node list '{}' is malformed", node_list));
  return std::string(entry.substr(0, open)) + std::string(first) +
         std::string(entry.substr(entry.find(']') + 1));
}

int slurm_tasks_on_node(std::string_view tasks_per_node, int node_id) {
  // Entries "COUNT" or "COUNT(xREPEATS)", separated by commas, one per run of nodes.
  const auto malformed = [&] {
    return std::invalid_argument(
        fmt::format("SLURM tasks-per-node list '{}' is malformed", tasks_per_node));
  };
  const auto number = [&](std::string_view text) {
    long long value = 0;
    const auto [stop, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || stop != text.data() + text.size() || text.empty() || value < 1)
      throw malformed();
    return value;
  };
  if (node_id < 0) throw std::invalid_argument(fmt::format("SLURM node id {}", node_id));
  // The whole list is read, so that a malformed one is refused whichever node asks.
  std::optional<int> tasks;
  long long nodes_before = 0;
  std::size_t start = 0;
  while (start <= tasks_per_node.size()) {
    const auto end = std::min(tasks_per_node.find(',', start), tasks_per_node.size());
    const auto entry = tasks_per_node.substr(start, end - start);
    const auto open = entry.find('(');
    long long repeats = 1;
    if (open != std::string_view::npos) {
      if (entry.size() < open + 4 || entry.substr(open, 2) != "(x" || entry.back() != ')')
        throw malformed();
      repeats = number(entry.substr(open + 2, entry.size() - open - 3));
    }
    const auto count = number(entry.substr(0, open));
    if (!tasks && node_id < nodes_before + repeats) tasks = static_cast<int>(count);
    nodes_before += repeats;
    start = end + 1;
  }
  if (!tasks)
    throw std::invalid_argument(
        fmt::format("SLURM tasks-per-node list '{}' has no node {}", tasks_per_node, node_id));
  return *tasks;
}

int slurm_rendezvous_port(long long job_id) { return 20000 + static_cast<int>(job_id % 20000); }

}  // namespace headroom::distributed
