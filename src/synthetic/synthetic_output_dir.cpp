#include "synthetic_output_dir.hpp"

#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <ftw.h>
#include <unistd.h>

#include "headroom/util/output_path.hpp"
#include "headroom/util/stale_temporaries.hpp"

namespace headroom::synthetic::detail {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

void fsync_path(const fs::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) throw_errno("cannot open " + path.string());
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw_errno("cannot sync " + path.string());
}

void fsync_directory(const fs::path& dir) { fsync_path(dir, O_RDONLY | O_DIRECTORY); }

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

// Deletes `path` and everything under it; an absent path is fine. Not std::filesystem::remove_all:
// the LibTorch wheel exports its own copy of that function, built against a newer libstdc++, and
// in a binary that links LibTorch before libstdc++ the call lands there and crashes on any
// non-empty directory (it calls recursive_directory_iterator::__erase, which GCC 12's libstdc++
// lacks).
bool remove_tree(const fs::path& path) {
  if (::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0) return true;
  return errno == ENOENT;
}

void remove_tree_or_throw(const fs::path& path) {
  if (!remove_tree(path)) throw_errno("cannot remove " + path.string());
}

}  // namespace

StagedDirectory::StagedDirectory(const fs::path& target, bool overwrite,
                                 std::string_view marker_file)
    : display_(target.string()), marker_(marker_file), overwrite_(overwrite) {
  target_ = fs::absolute(target).lexically_normal();
  if (!target_.has_filename()) target_ = target_.parent_path();  // "out/" names "out"
  if (target_ == target_.root_path()) throw std::runtime_error("cannot write a dataset to /");
  check_target();

  const fs::path parent = target_.parent_path();
  fs::create_directories(parent);
  const std::string prefix = target_.filename().string() + ".tmp-";
  const std::string old_prefix = target_.filename().string() + ".old-";
  for (const auto& entry : fs::directory_iterator(parent)) {
    if (util::is_stale_temporary(entry.path(), prefix) ||
        util::is_stale_temporary(entry.path(), old_prefix)) {
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
  util::require_replaceable(target_, marker_, "synthetic dataset");
}

void StagedDirectory::commit() {
  fsync_tree(staging_);
  const fs::path parent = target_.parent_path();
  // Checked again: another run may have created the target while this one was generating.
  check_target();
  const bool replacing = fs::exists(fs::symlink_status(target_));
  const unsigned flags = replacing ? RENAME_EXCHANGE : RENAME_NOREPLACE;
  const int rc = ::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), flags);
  const int rename_errno = errno;
  if (rc == 0) {
    committed_ = true;
    // After an exchange the staging name holds the old dataset.
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

void write_synced_file(const fs::path& file, std::string_view content) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw_errno("cannot create " + file.string());
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      errno = saved;
      throw_errno("cannot write " + file.string());
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const int saved = errno;
  if (::close(fd) != 0 || !synced) {
    if (!synced) errno = saved;
    throw_errno("cannot sync " + file.string());
  }
}

}  // namespace headroom::synthetic::detail
