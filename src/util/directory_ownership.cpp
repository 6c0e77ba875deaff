#include "headroom/util/directory_ownership.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <system_error>

#include "headroom/util/printable_text.hpp"
#include "headroom/util/staged_directory.hpp"

namespace headroom::util {
namespace fs = std::filesystem;
namespace {

// Depth-first walk of `directory` (at `relative` below the root), collecting foreign entries.
void collect_foreign(const fs::path& directory, const fs::path& relative,
                     const OwnEntryPredicate& is_own, std::size_t limit,
                     std::vector<fs::path>& found) {
  std::error_code ec;
  fs::directory_iterator it(directory, ec);
  if (ec) {
    found.push_back(relative.empty() ? fs::path(".") : relative);
    return;
  }
  for (const auto& entry : it) {
    if (found.size() >= limit) return;
    const fs::path name = relative / entry.path().filename();
    const auto status = entry.symlink_status(ec);
    const bool is_directory = !ec && fs::is_directory(status);
    const bool is_file = !ec && fs::is_regular_file(status);
    if ((!is_directory && !is_file) || !is_own(name, is_directory)) {
      found.push_back(name);
    } else if (is_directory) {
      collect_foreign(entry.path(), name, is_own, limit, found);
    }
  }
}

}  // namespace

std::vector<fs::path> foreign_entries(const fs::path& root, const OwnEntryPredicate& is_own,
                                      std::size_t limit) {
  std::vector<fs::path> found;
  if (limit > 0) collect_foreign(root, {}, is_own, limit, found);
  return found;
}

std::string describe_foreign_entries(const std::vector<fs::path>& entries) {
  if (entries.empty()) return {};
  std::string names;
  for (const auto& entry : entries)
    names += (names.empty() ? "'" : ", '") + printable_path(entry) + "'";
  return "it holds " + names + " that headroom did not write";
}

bool is_empty_directory(const fs::path& directory) {
  std::error_code ec;
  const auto status = fs::symlink_status(directory, ec);
  if (ec || !fs::is_directory(status)) return false;
  const bool empty = fs::is_empty(directory, ec);
  return !ec && empty;
}

bool remove_if_ours(const fs::path& directory, const DirectoryKind& kind) {
  std::error_code ec;
  const auto status = fs::symlink_status(directory, ec);
  if (ec || !fs::exists(status)) return true;
  std::string why;
  if (fs::is_symlink(status) || !fs::is_directory(status))
    why = "it is not a directory";
  else if (!is_empty_directory(directory))
    why = kind.why_not_ours(directory);
  if (!why.empty()) {
    fmt::print(stderr, "warning: left '{}' in place, not a {} that headroom wrote: {}\n",
               printable_path(directory), kind.what, why);
    return false;
  }
  if (remove_tree(directory)) return true;
  fmt::print(stderr, "warning: cannot remove '{}' ({})\n", printable_path(directory),
             std::generic_category().message(errno));
  return false;
}

}  // namespace headroom::util
