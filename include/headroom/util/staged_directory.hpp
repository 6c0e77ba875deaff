// All-or-nothing publication of a directory a command writes: it is built in a sibling staging
// directory `<target>.tmp-<pid>` and appears under its final name only when complete and synced.
// A killed writer leaves at most its staging directory, which the next writer of the same target
// removes once the process is gone (stale_temporaries.hpp).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace headroom::util {

// Not thread-safe; one per output directory being written. Throws std::runtime_error or
// std::system_error with a one-line message naming the path.
class StagedDirectory {
 public:
  // Checks that `target` may be written (absent; or, with `overwrite`, an empty directory or one
  // holding `marker_file`, which only headroom writes: output_path.hpp), removes staging
  // directories that killed runs left beside it, and creates a fresh one (and the target's parent
  // directories). `what` names the kind of output in messages ("synthetic dataset").
  StagedDirectory(const std::filesystem::path& target, bool overwrite, std::string_view marker_file,
                  std::string_view what);
  // Removes the staging directory unless commit() succeeded.
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  const std::filesystem::path& staging() const { return staging_; }
  const std::filesystem::path& target() const { return target_; }  // absolute, normalised

  // Syncs the staged tree and moves the staging directory to the target in one rename
  // (exchanging it with the old target when overwriting, then deleting the old one). The target
  // is checked again first: another run may have created it meanwhile.
  void commit();

 private:
  void check_target() const;

  std::string display_;  // the target as the user wrote it, for messages
  std::filesystem::path target_;
  std::filesystem::path staging_;
  std::string marker_;
  std::string what_;
  bool overwrite_;
  bool committed_ = false;
};

// Deletes `path` and everything under it; an absent path is fine. Returns false when something
// could not be removed. Not std::filesystem::remove_all: the LibTorch wheel exports its own copy of
// that function, built against a newer libstdc++, and in a binary that links LibTorch before
// libstdc++ the call lands there and crashes on any non-empty directory.
bool remove_tree(const std::filesystem::path& path);

}  // namespace headroom::util
