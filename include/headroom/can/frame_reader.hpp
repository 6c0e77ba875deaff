// Streaming access to the frames of one CAN log. Readers hold a bounded buffer (a few MiB at most)
// whatever the file size: nothing reads a whole file into memory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>

#include "headroom/can/can_frame.hpp"

namespace headroom::can {

// What to do with a row that cannot be parsed.
enum class BadRowPolicy {
  kError,  // throw util::InputError naming file, line, column and reason
  kSkip,   // drop the row, count it in skipped_rows()
};

// Not thread-safe: one reader is used by one thread at a time.
class FrameReader {
 public:
  virtual ~FrameReader() = default;

  // Writes up to out.size() frames in file order and returns how many; 0 means end of input.
  // Throws InputError on bad input (under BadRowPolicy::kError) or an unreadable file.
  virtual std::size_t read(std::span<CanFrame> out) = 0;

  // Rows dropped so far under BadRowPolicy::kSkip.
  virtual std::uint64_t skipped_rows() const = 0;

  virtual const std::filesystem::path& path() const = 0;
};

}  // namespace headroom::can
