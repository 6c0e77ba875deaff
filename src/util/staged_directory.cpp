#include "headroom/util/staged_directory.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <ftw.h>
#include <unistd.h>

#include "headroom/util/file_reader.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/output_path.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/stale_temporaries.hpp"

namespace headroom::util {
namespace fs = std::filesystem;
namespace {

// Inside a staging directory: the marker, the tree being built, and (only while a replaced target
// waits to be deleted, on file systems without an exchanging rename) the old target.
constexpr const char* kMarkerName = ".headroom-staging";
constexpr const char* kTreeName = "tree";
constexpr const char* kOldTreeName = "old";

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// The marker names its own staging directory, so a copied or hand-made one proves nothing.
std::string marker_text(const fs::path& wrapper) {
  return "headroom staging directory " + wrapper.filename().string() + "\n";
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

bool has_own_marker(const fs::path& wrapper) {
  std::error_code ec;
  const auto marker = wrapper / kMarkerName;
  if (!fs::is_regular_file(fs::symlink_status(marker, ec))) return false;
  try {
    return read_file(marker) == marker_text(wrapper);
  } catch (const std::exception&) {
    return false;
  }
}

// What a writer killed while it made its staging directory leaves (the constructor creates the
// directory, then its marker): the directory alone, or with a marker cut short (empty, or the
// start of its text). Nothing in it can be anyone else's, so it is removed like a finished one.
bool is_unfinished_staging(const fs::path& wrapper) {
  std::error_code ec;
  fs::directory_iterator it(wrapper, ec);
  if (ec) return false;
  const std::string expected = marker_text(wrapper);
  for (const auto& entry : it) {
    if (entry.path().filename() != kMarkerName) return false;
    if (!fs::is_regular_file(entry.symlink_status(ec))) return false;
    const auto text = read_file_if_readable(entry.path(), expected.size());
    if (!text || text->size() >= expected.size() || !expected.starts_with(*text)) return false;
  }
  return true;
}

// Why `wrapper` is not provably a staging directory of `kind` that headroom made ("" when it is).
std::string why_not_our_staging(const fs::path& wrapper, const DirectoryKind& kind) {
  if (!has_own_marker(wrapper))
    return is_unfinished_staging(wrapper) ? std::string()
                                          : std::string("it has no headroom marker ") + kMarkerName;
  const auto foreign = foreign_entries(wrapper, [&](const fs::path& relative, bool is_directory) {
    const auto top = *relative.begin();
    if (relative == kMarkerName) return !is_directory;
    if (top != kTreeName && top != kOldTreeName) return false;
    if (relative == top) return is_directory;
    return kind.is_staged_entry(relative.lexically_relative(top), is_directory);
  });
  return describe_foreign_entries(foreign);
}

// Deletes a staging directory when it is provably headroom's; warns and keeps it otherwise.
bool remove_staging_if_ours(const fs::path& wrapper, const DirectoryKind& kind) {
  const auto why = why_not_our_staging(wrapper, kind);
  if (why.empty() && remove_tree(wrapper)) return true;
  fmt::print(stderr, "warning: left '{}' in place ({})\n", printable_path(wrapper),
             why.empty() ? "it could not be removed" : why);
  return false;
}

}  // namespace

bool remove_tree(const fs::path& path) {
  if (::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0) return true;
  return errno == ENOENT;
}

int remove_stale_staging(const fs::path& target, const DirectoryKind& kind) {
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string name = target.filename().string();
  std::error_code ec;
  fs::directory_iterator it(parent, ec);
  if (ec) return 0;
  std::vector<fs::path> stale;
  for (const auto& entry : it)
    if (is_stale_temporary(entry.path(), name) && fs::is_directory(entry.symlink_status(ec)))
      stale.push_back(entry.path());
  int removed = 0;
  for (const auto& wrapper : stale) removed += remove_staging_if_ours(wrapper, kind) ? 1 : 0;
  return removed;
}

// A parent that is a file or a device (`--out /dev/null/x`) was the bare "filesystem error: cannot
// create directories: Not a directory [/dev/null]".
void create_parent_directories(const fs::path& parent, const std::string& display) {
  std::error_code failure;
  fs::create_directories(parent, failure);
  if (!failure) return;
  fs::path not_a_directory;  // the highest ancestor that exists and is something else
  for (fs::path ancestor = parent; ancestor.has_relative_path();
       ancestor = ancestor.parent_path()) {
    std::error_code unknown;
    const auto status = fs::status(ancestor, unknown);
    if (fs::exists(status) && !fs::is_directory(status)) not_a_directory = ancestor;
  }
  if (!not_a_directory.empty())
    throw std::runtime_error(fmt::format("cannot write {}: {} is not a directory",
                                         printable(display), printable_path(not_a_directory)));
  throw std::runtime_error(fmt::format("cannot write {}: cannot create {}: {}", printable(display),
                                       printable_path(parent), failure.message()));
}

StagedDirectory::StagedDirectory(const fs::path& target, bool overwrite, DirectoryKind kind)
    : display_(target.string()), kind_(std::move(kind)), overwrite_(overwrite) {
  target_ = fs::absolute(target).lexically_normal();
  if (!target_.has_filename()) target_ = target_.parent_path();  // "out/" names "out"
  if (target_ == target_.root_path())
    throw std::runtime_error("cannot write a " + kind_.what + " to /");
  require_storage_location(target_, "the " + kind_.what);
  check_target();

  create_parent_directories(target_.parent_path(), display_);
  remove_stale_staging(target_, kind_);
  wrapper_ = temporary_path_for(target_);
  // A kill between this mkdir and the marker's one write leaves an unfinished staging directory,
  // which the next writer recognises and removes (is_unfinished_staging).
  fs::create_directory(wrapper_);
  try {
    ChecksummedFileWriter marker(wrapper_ / kMarkerName, 4096, /*compute_checksum=*/false);
    const auto text = marker_text(wrapper_);
    marker.write(std::as_bytes(std::span(text.data(), text.size())));
    marker.close();
    staging_ = wrapper_ / kTreeName;
    fs::create_directory(staging_);
  } catch (...) {
    remove_tree(wrapper_);  // only what this constructor just made
    throw;
  }
}

StagedDirectory::~StagedDirectory() {
  if (!committed_) remove_staging_if_ours(wrapper_, kind_);
}

void StagedDirectory::check_target() const {
  const auto status = fs::symlink_status(target_);
  if (!fs::exists(status)) return;
  if (!overwrite_) throw std::runtime_error(display_ + " exists (use --force to replace it)");
  // --force replaces what an earlier run wrote; it must not wipe an unrelated directory that a
  // mistyped --out happened to name.
  require_replaceable(target_, kind_);
}

void StagedDirectory::commit() {
  fsync_tree(staging_);
  const fs::path parent = target_.parent_path();
  check_target();
  const bool replacing = fs::exists(fs::symlink_status(target_));
  const unsigned flags = replacing ? RENAME_EXCHANGE : RENAME_NOREPLACE;
  fs::path old = staging_;  // after an exchange the tree's name holds the old target
  const int rc = ::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), flags);
  const int rename_errno = errno;
  if (rc == 0) {
    committed_ = true;
  } else if (rename_errno == EEXIST) {
    throw std::runtime_error(display_ + " exists (use --force to replace it)");
  } else if (rename_errno == EINVAL || rename_errno == ENOSYS) {
    // A file system without renameat2 flags: move the old directory aside, then rename. The
    // target is briefly absent, but never partial.
    old = wrapper_ / kOldTreeName;
    if (replacing) fs::rename(target_, old);
    fs::rename(staging_, target_);
    committed_ = true;
  } else {
    errno = rename_errno;
    throw_errno("cannot move " + staging_.string() + " to " + target_.string());
  }
  fsync_directory(parent);
  // Verified again before deleting: whatever joined the old target since the check stays.
  if (replacing && !remove_if_ours(old, kind_)) return;  // the staging directory keeps it
  std::error_code ignored;
  fs::remove(wrapper_ / kMarkerName, ignored);
  fs::remove(wrapper_, ignored);
}

}  // namespace headroom::util
