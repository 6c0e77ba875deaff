#include "headroom/util/staged_directory.hpp"

#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <ftw.h>
#include <unistd.h>

#include "headroom/util/file_writer.hpp"
#include "headroom/util/output_path.hpp"
#include "headroom/util/stale_temporaries.hpp"

namespace headroom::util {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// Directory entries of new files only become durable once their directory is synced.
void fsync_tree(const fs::path& root) {
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_directory()) dirs.push_back(entry.path());
  }
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) fsync_directory(*it);
  fsync_directory(root);
}

int remove_entry(const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }

void remove_tree_or_throw(const fs::path& path) {
  if (!remove_tree(path)) throw_errno("cannot remove " + path.string());
}

}  // namespace

bool remove_tree(const fs::path& path) {
  if (::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0) return true;
  return errno == ENOENT;
}

StagedDirectory::StagedDirectory(const fs::path& target, bool overwrite,
                                 std::string_view marker_file, std::string_view what)
    : display_(target.string()), marker_(marker_file), what_(what), overwrite_(overwrite) {
  target_ = fs::absolute(target).lexically_normal();
  if (!target_.has_filename()) target_ = target_.parent_path();  // "out/" names "out"
  if (target_ == target_.root_path()) throw std::runtime_error("cannot write a " + what_ + " to /");
  check_target();

  const fs::path parent = target_.parent_path();
  fs::create_directories(parent);
  const std::string prefix = target_.filename().string() + ".tmp-";
  const std::string old_prefix = target_.filename().string() + ".old-";
  for (const auto& entry : fs::directory_iterator(parent)) {
    if (is_stale_temporary(entry.path(), prefix) || is_stale_temporary(entry.path(), old_prefix)) {
      remove_tree_or_throw(entry.path());
    }
  }
  staging_ = parent / (prefix + std::to_string(::getpid()));
  remove_tree_or_throw(staging_);
  fs::create_directory(staging_);
}

StagedDirectory::~StagedDirectory() {
  if (committed_) return;
  remove_tree(staging_);
}

void StagedDirectory::check_target() const {
  const auto status = fs::symlink_status(target_);
  if (!fs::exists(status)) return;
  if (!overwrite_) throw std::runtime_error(display_ + " exists (use --force to replace it)");
  // --force replaces what an earlier run wrote; it must not wipe an unrelated directory that a
  // mistyped --out happened to name.
  require_replaceable(target_, marker_, what_);
}

void StagedDirectory::commit() {
  fsync_tree(staging_);
  const fs::path parent = target_.parent_path();
  check_target();
  const bool replacing = fs::exists(fs::symlink_status(target_));
  const unsigned flags = replacing ? RENAME_EXCHANGE : RENAME_NOREPLACE;
  const int rc = ::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), flags);
  const int rename_errno = errno;
  if (rc == 0) {
    committed_ = true;
    // After an exchange the staging name holds the old directory.
    if (replacing) remove_tree_or_throw(staging_);
  } else if (rename_errno == EEXIST) {
    throw std::runtime_error(display_ + " exists (use --force to replace it)");
  } else if (rename_errno == EINVAL || rename_errno == ENOSYS) {
    // A file system without renameat2 flags: move the old directory aside, then rename. The
    // target is briefly absent, but never partial.
    const fs::path old =
        parent / (target_.filename().string() + ".old-" + std::to_string(::getpid()));
    if (replacing) fs::rename(target_, old);
    fs::rename(staging_, target_);
    committed_ = true;
    if (replacing) remove_tree_or_throw(old);
  } else {
    errno = rename_errno;
    throw_errno("cannot move " + staging_.string() + " to " + target_.string());
  }
  fsync_directory(parent);
}

}  // namespace headroom::util
