// One stage's run directory, runs/{dataset}/{size}_{stage}[_kd]/: the resolved configuration
// (config.json), a human-readable log (log.txt), one JSON line per epoch (metrics.jsonl), the best
// checkpoint by validation loss (best.pt), the resumable training state (last.pt) and, once the
// stage has finished, its outcome (result.json). One process at a time: the object holds an
// exclusive lock on the directory (headroom.lock, util/exclusive_lock.hpp) for its lifetime.
// Not thread-safe: the training thread owns it.
// Only the process that writes (util/process_role.hpp) touches the file system: in the others
// every write, log line and clear() is a no-op, and reads see what the writing process wrote.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>  // kept for the files that include this header for it
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "headroom/util/exclusive_lock.hpp"
#include "headroom/util/regular_file.hpp"

namespace headroom::train {

class RunDirectory {
 public:
  // The most metrics.jsonl that is read back (a stage's epoch and sampled step lines are far less).
  static constexpr std::uint64_t kMaxMetricsBytes = std::uint64_t{256} << 20;

  // Creates the directory (and parents) and locks it before anything in it is written: while
  // another process holds the lock, throws std::runtime_error naming its pid (kFail) or waits for
  // it (kWait). `echo` also prints log lines to stdout. Every file the stage appends to (log.txt,
  // metrics.jsonl) must be a regular file of its own: a symbolic link, a second hard link, a FIFO
  // or a device at its name is refused (std::runtime_error naming it), never written through.
  explicit RunDirectory(std::filesystem::path path, bool echo = true,
                        util::WhenLocked when_locked = util::WhenLocked::kFail);

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path best_checkpoint() const { return path_ / "best.pt"; }
  std::filesystem::path state_checkpoint() const { return path_ / "last.pt"; }
  std::filesystem::path metrics_file() const { return path_ / "metrics.jsonl"; }
  std::filesystem::path config_file() const { return path_ / "config.json"; }
  std::filesystem::path result_file() const { return path_ / "result.json"; }
  std::filesystem::path log_file() const { return path_ / "log.txt"; }
  std::filesystem::path lock_file() const { return path_ / "headroom.lock"; }
  // A distilled stage's teacher output cache (its key beside it, teacher_outputs.json). clear()
  // keeps it: the key says whether it still applies.
  std::filesystem::path teacher_outputs_file() const { return path_ / "teacher_outputs.bin"; }

  // Written atomically (temporary file, fsync, rename).
  void write_config(const nlohmann::json& config) const;
  void write_result(const nlohmann::json& result) const;
  // The stored JSON, or null when the file does not exist. Throws on unparsable content, and on a
  // file that is not a regular one or is larger than util::kDefaultMaxReadBytes, naming the file.
  nlohmann::json read_config() const;
  nlohmann::json read_result() const;

  // Appends a line to log.txt (flushed) with the elapsed time, and echoes it.
  void log(std::string_view line);
  // Appends one JSON object as a line of metrics.jsonl and flushes it to disk.
  void append_metrics(const nlohmann::json& line);
  // Keeps only the metrics lines whose "epoch" is below `epochs` (a resumed run redoes the rest),
  // rewriting the file atomically. A torn last line (killed mid-write) is dropped. A metrics file
  // larger than kMaxMetricsBytes is refused, naming it.
  void truncate_metrics(std::int64_t epochs);
  // Removes the stage's files for a fresh start (keeps the directory).
  void clear();

 private:
  std::filesystem::path path_;
  bool echo_;
  std::optional<util::ExclusiveLock> lock_;  // held by the writing process only
  util::FileDescriptor log_;                 // log.txt, open for appending in the writing process
};

}  // namespace headroom::train
