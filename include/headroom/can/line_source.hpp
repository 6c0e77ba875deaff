// Physical lines of a text file, read block by block into one reusable buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

namespace headroom::can {

// Reads `block_bytes` at a time with read(2); the buffer only grows when one line is longer than
// it, and never past kMaxLineBytes, so memory stays bounded whatever the file size. A UTF-8 byte
// order mark at the start of the file is dropped. Owns its file descriptor. Not thread-safe.
class LineSource {
 public:
  static constexpr std::size_t kDefaultBlockBytes = std::size_t{1} << 20;
  static constexpr std::size_t kMaxLineBytes = std::size_t{16} << 20;

  // Throws InputError (line 0) when the file cannot be opened, is a directory, is not a regular
  // file (a FIFO would block, a device never end) or is empty.
  explicit LineSource(std::filesystem::path file, std::size_t block_bytes = kDefaultBlockBytes);
  ~LineSource();
  LineSource(const LineSource&) = delete;
  LineSource& operator=(const LineSource&) = delete;

  // Sets `line` to the next physical line without its "\n" or "\r\n" (a last line without a
  // terminator counts) and returns true; false at end of file. The view is valid until the next
  // call. Throws InputError on a read failure or a line longer than kMaxLineBytes.
  bool next(std::string_view& line);

  // 1-based number of the line `next` returned last (0 before the first).
  std::uint64_t line_number() const noexcept { return line_number_; }
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  // Moves the unread tail to the front and appends the next block; false at end of file.
  bool refill();

  std::filesystem::path path_;
  int fd_ = -1;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;    // first unread byte
  std::size_t end_ = 0;      // one past the last valid byte
  std::size_t scanned_ = 0;  // bytes after begin_ known to hold no '\n'
  bool eof_ = false;
  bool at_start_ = true;
  std::uint64_t line_number_ = 0;
};

}  // namespace headroom::can
