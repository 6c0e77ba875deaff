#include "headroom/util/stale_temporaries.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <system_error>

namespace headroom::util {
namespace {

constexpr std::string_view kTemporaryInfix = ".tmp-headroom-";
constexpr std::size_t kTokenDigits = 16;

std::uint64_t random_token() {
  static std::mutex mutex;
  static std::random_device device;
  const std::lock_guard lock(mutex);
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

bool all_of(std::string_view text, std::string_view allowed) {
  return !text.empty() && text.find_first_not_of(allowed) == std::string_view::npos;
}

// Whether `pid` names a process that still runs. A zombie (state Z in /proc/PID/stat: killed, not
// yet reaped by its parent) answers kill(pid, 0) but writes nothing more: a rerun right after a
// kill -9 once kept the killed writer's staging directory (a whole partial store) for that reason.
bool process_runs(pid_t pid) {
  // EPERM: the process exists but belongs to someone else.
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;  // no /proc: trust kill()
  // "PID (COMM) STATE ...": COMM may hold spaces and parentheses, so the state follows the last
  // ')'.
  const auto close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'Z';
}

}  // namespace

std::filesystem::path temporary_path_for(const std::filesystem::path& target) {
  auto path = target;
  path += fmt::format("{}{}-{:016x}", kTemporaryInfix, ::getpid(), random_token());
  return path;
}

bool is_stale_temporary(const std::filesystem::path& entry, std::string_view target_name) {
  const std::string name = entry.filename().string();
  const std::string prefix = std::string(target_name) + std::string(kTemporaryInfix);
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return false;
  const std::string_view rest = std::string_view(name).substr(prefix.size());
  const auto dash = rest.find('-');
  if (dash == std::string_view::npos) return false;
  const std::string_view digits = rest.substr(0, dash);
  const std::string_view token = rest.substr(dash + 1);
  if (digits.empty() || digits.size() > 9 || digits.front() == '0' || !all_of(digits, "0123456789"))
    return false;
  if (token.size() != kTokenDigits || !all_of(token, "0123456789abcdef")) return false;
  return !process_runs(static_cast<pid_t>(std::stol(std::string(digits))));
}

int remove_stale_temporaries(const std::filesystem::path& target) {
  const auto parent = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  const std::string name = target.filename().string();
  std::error_code ec;
  std::filesystem::directory_iterator it(parent, ec);
  if (ec) return 0;
  int removed = 0;
  for (const auto& entry : it) {
    if (!is_stale_temporary(entry.path(), name)) continue;
    std::error_code ignored;
    if (!std::filesystem::is_regular_file(entry.symlink_status(ignored))) continue;
    if (std::filesystem::remove(entry.path(), ignored)) ++removed;
  }
  return removed;
}

}  // namespace headroom::util
