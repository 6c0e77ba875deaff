// TensorBoard event files: TFRecord-framed serialized tensorboard.Event protobufs, the schema
// compiled at build time from the tensorboard package (cmake/tensorboard_schema.py); the
// framing's CRC32C comes from Boost.CRC. The file is appended and flushed record by record, like
// metrics.jsonl: a crash loses at most the record being written, and TensorBoard skips a torn
// last record.
//
// A data-side area on purpose: the torch wheel's include directory carries an older protobuf's
// headers that would shadow Debian's (as with fmt, DEVELOPERS.md), so the code that includes the
// generated schema never sees torch headers. Thread-safety: none; one thread owns a writer.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "headroom/util/regular_file.hpp"

namespace headroom::tensorboard {

// One events file. Throws std::runtime_error naming the file when it cannot be created or
// written.
class EventFileWriter {
 public:
  // Creates `directory` (and parents) and a new events.out.tfevents.<seconds>.<host> file in it,
  // starting with the file-version event TensorBoard expects first. A symbolic link, a second hard
  // link or anything but a regular file at that name is refused (util/regular_file.hpp).
  explicit EventFileWriter(const std::filesystem::path& directory);
  const std::filesystem::path& path() const { return path_; }
  // One scalar summary event; `wall_time` in seconds since the Unix epoch.
  void add_scalar(const std::string& tag, double value, std::int64_t step, double wall_time);

 private:
  void write_record(std::string_view data);
  std::filesystem::path path_;
  util::FileDescriptor out_;  // open for appending
};

// The TFRecord checksum of `data`: CRC32C, rotated and offset as TFRecord masks it.
std::uint32_t masked_crc32c(std::string_view data);

}  // namespace headroom::tensorboard
