// All-or-nothing publication of a generated directory: it is built in a sibling staging directory
// and appears under its final name only when complete and synced.
#pragma once

#include <filesystem>
#include <string_view>

namespace headroom::synthetic::detail {

// Not thread-safe; one per generation run.
class StagedDirectory {
 public:
  // Checks that `target` may be written (absent; or, with `overwrite`, empty or holding
  // `marker_file`), removes staging directories that crashed runs left beside it, and creates a
  // fresh one. Throws std::runtime_error when `target` may not be written.
  StagedDirectory(const std::filesystem::path& target, bool overwrite,
                  std::string_view marker_file);
  // Removes the staging directory unless commit() succeeded.
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  const std::filesystem::path& staging() const { return staging_; }

  // Syncs the staged directories and moves the staging directory to the target in one rename
  // (exchanging it with the old target when overwriting, then deleting the old one).
  void commit();

 private:
  void check_target() const;

  std::string display_;  // the target as the user wrote it, for messages
  std::filesystem::path target_;
  std::filesystem::path staging_;
  std::string marker_;
  bool overwrite_;
  bool committed_ = false;
};

// Writes `content` to `file` and fsyncs it. Throws std::system_error on failure.
void write_synced_file(const std::filesystem::path& file, std::string_view content);

}  // namespace headroom::synthetic::detail
