// Writes frames as can-train-and-test CSV rows (`timestamp,arbitration_id,data_field,attack`,
// e.g. `1672531200.000250,1E5,0011223344556677,0`) through one large buffer, then fsyncs.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>

#include "synthetic_frame.hpp"

namespace headroom::synthetic::detail {

// Owns the file descriptor. Not thread-safe.
class CanCsvWriter {
 public:
  // Creates (truncates) `file` and writes the header. Throws std::system_error on failure.
  explicit CanCsvWriter(const std::filesystem::path& file);
  ~CanCsvWriter();  // closes without syncing if finish() was not reached (an error path)
  CanCsvWriter(const CanCsvWriter&) = delete;
  CanCsvWriter& operator=(const CanCsvWriter&) = delete;

  void write(const SyntheticFrame& frame) {
    if (used_ > kBufferBytes - kMaxRowBytes) flush();
    used_ += format_row(frame, buffer_.get() + used_);
  }

  // Writes what is buffered, fsyncs and closes. Throws std::system_error on failure.
  void finish();

  // Formats one row (with its newline) into `out`, which has room for kMaxRowBytes; returns bytes.
  static std::size_t format_row(const SyntheticFrame& frame, char* out);

  static constexpr std::size_t kMaxRowBytes = 96;

 private:
  static constexpr std::size_t kBufferBytes = std::size_t{1} << 20;

  void flush();

  std::filesystem::path file_;
  int fd_ = -1;
  std::unique_ptr<char[]> buffer_;
  std::size_t used_ = 0;
};

}  // namespace headroom::synthetic::detail
