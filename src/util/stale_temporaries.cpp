#include "headroom/util/stale_temporaries.hpp"

#include <signal.h>

#include <cerrno>
#include <string>
#include <system_error>

namespace headroom::util {

bool is_stale_temporary(const std::filesystem::path& entry, std::string_view prefix) {
  const std::string name = entry.filename().string();
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return false;
  const std::string digits = name.substr(prefix.size());
  if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
    return false;
  const auto pid = static_cast<pid_t>(std::stol(digits));
  // EPERM: the process exists but belongs to someone else.
  return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH;
}

int remove_stale_temporaries(const std::filesystem::path& target) {
  const auto parent = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  const std::string prefix = target.filename().string() + ".tmp-";
  std::error_code ec;
  std::filesystem::directory_iterator it(parent, ec);
  if (ec) return 0;
  int removed = 0;
  for (const auto& entry : it) {
    if (!is_stale_temporary(entry.path(), prefix)) continue;
    std::error_code ignored;
    if (std::filesystem::remove_all(entry.path(), ignored) > 0) ++removed;
  }
  return removed;
}

}  // namespace headroom::util
