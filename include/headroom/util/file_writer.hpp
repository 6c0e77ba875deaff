// Buffered, checksummed, durable file output, and the atomic-replace helpers built on it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace headroom::util {

// Appends bytes to a new file through a buffer and keeps an XXH3-64 checksum of everything
// written, so no second pass is needed to checksum it. close() flushes and fsyncs.
// Not thread-safe. Throws std::system_error naming the file on any I/O failure.
class ChecksummedFileWriter {
 public:
  // Creates (truncates) `path`; a symbolic link, a second hard link or anything but a regular file
  // at `path` is refused untouched (regular_file.hpp, create_for_writing). `buffer_bytes` is the
  // write buffer size. Scratch files that are never verified pass `compute_checksum = false` to
  // skip the hashing.
  explicit ChecksummedFileWriter(std::filesystem::path path, std::size_t buffer_bytes = 1 << 20,
                                 bool compute_checksum = true);
  ~ChecksummedFileWriter();  // closes without fsync if close() was not called
  ChecksummedFileWriter(const ChecksummedFileWriter&) = delete;
  ChecksummedFileWriter& operator=(const ChecksummedFileWriter&) = delete;

  void write(std::span<const std::byte> bytes);
  template <typename T>
  void write_values(std::span<const T> values) {
    write(std::as_bytes(values));
  }

  // Flushes, fsyncs (unless `durable` is false, for scratch files) and closes. Idempotent.
  void close(bool durable = true);

  std::uint64_t bytes_written() const { return bytes_written_; }
  std::uint64_t checksum() const;  // XXH3-64 of all bytes written so far (0 when not computed)
  const std::filesystem::path& path() const { return path_; }

 private:
  void flush_buffer();

  std::filesystem::path path_;
  int fd_ = -1;
  std::vector<std::byte> buffer_;
  std::size_t buffered_ = 0;
  std::uint64_t bytes_written_ = 0;
  struct HashState;
  std::unique_ptr<HashState> hash_;
};

// Writes `content` to `path` atomically: a temporary sibling (temporary_path_for), fsync, rename,
// fsync of the directory. Readers see either the old file or the new one, never a partial one; a
// failed write (a full disk) removes its temporary before it throws.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

// fsyncs a directory so that renames and creations inside it are durable.
void fsync_directory(const std::filesystem::path& dir);

// Formats a 64-bit checksum as 16 lowercase hex digits (the form manifests store).
std::string checksum_hex(std::uint64_t checksum);

// XXH3-64 of a whole file, read in bounded chunks (does not map the file). Only a regular file is
// read (links followed); anything else throws naming it.
std::uint64_t checksum_file(const std::filesystem::path& path);

// XXH3-64 of a byte range.
std::uint64_t checksum_bytes(std::span<const std::byte> bytes);

}  // namespace headroom::util
