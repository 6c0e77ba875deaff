// All-or-nothing publication of a directory a command writes. It is built inside a sibling
// staging directory, `<target>.tmp-headroom-<pid>-<token>/` (stale_temporaries.hpp), which holds
// a marker file naming it and the tree being built (`tree/`); the tree appears under its final
// name only when complete and synced. A killed writer leaves at most that staging directory, which
// the next writer of the same target removes once the process is gone -- but only when its marker
// is there and every entry in it is one the writer creates (DirectoryKind::is_staged_entry), or
// when it holds nothing but, at most, a marker cut short (a writer killed between creating the
// directory and writing its marker): anything else found there is left, with a warning.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "headroom/util/directory_ownership.hpp"

namespace headroom::util {

// Creates `parent` and the directories above it, for the output `display` (as the user wrote it).
// Throws std::runtime_error naming `display` and, when one is in the way, the ancestor that is no
// directory ("cannot write /dev/null/x: /dev/null is not a directory").
void create_parent_directories(const std::filesystem::path& parent, const std::string& display);

// Not thread-safe; one per output directory being written. Throws std::runtime_error or
// std::system_error with a one-line message naming the path.
class StagedDirectory {
 public:
  // Checks that `target` may be written (absent; or, with `overwrite`, an empty directory or one
  // `kind` recognises as headroom's: output_path.hpp), removes the staging directories that killed
  // runs left beside it, and creates a fresh one (and the target's parent directories).
  StagedDirectory(const std::filesystem::path& target, bool overwrite, DirectoryKind kind);
  // Removes the staging directory unless commit() succeeded (leaving, with a warning, anything in
  // it that the writer does not create).
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  // The directory to fill: it becomes the target on commit().
  const std::filesystem::path& staging() const { return staging_; }
  const std::filesystem::path& target() const { return target_; }  // absolute, normalised

  // Syncs the staged tree and moves it to the target in one rename (exchanging it with the old
  // target when overwriting). The target is checked again first: another run may have created or
  // changed it meanwhile. The old target is deleted only if it is still recognised as headroom's;
  // otherwise it stays in the staging directory, named in a warning.
  void commit();

 private:
  void check_target() const;

  std::string display_;  // the target as the user wrote it, for messages
  std::filesystem::path target_;
  std::filesystem::path wrapper_;  // the staging directory: marker and tree
  std::filesystem::path staging_;  // wrapper_ / "tree"
  DirectoryKind kind_;
  bool overwrite_;
  bool committed_ = false;
};

// Removes the staging directories of `target` (beside it) whose writer is gone, as the
// constructor does. Returns how many were removed.
int remove_stale_staging(const std::filesystem::path& target, const DirectoryKind& kind);

// Deletes `path` and everything under it; an absent path is fine. Returns false when something
// could not be removed. Callers prove the tree is headroom's first (directory_ownership.hpp). Not
// std::filesystem::remove_all: the LibTorch wheel exports its own copy of that function, built
// against a newer libstdc++, and in a binary that links LibTorch before libstdc++ the call lands
// there and crashes on any non-empty directory.
bool remove_tree(const std::filesystem::path& path);

}  // namespace headroom::util
