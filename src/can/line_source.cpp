#include "headroom/can/line_source.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "headroom/util/input_error.hpp"
#include "headroom/util/regular_file.hpp"

namespace headroom::can {

LineSource::LineSource(std::filesystem::path file, std::size_t block_bytes)
    : path_(std::move(file)) {
  // Only a regular file (links followed): a FIFO would block the read forever (the baseline reads
  // a store's source files back long after they were checked) and a device such as /dev/zero
  // would never end it.
  std::string why;
  auto fd = util::try_open_regular_for_reading(path_, &why);
  if (!fd) {
    throw util::InputError(path_, 0, "",
                           why.starts_with("a directory") ? "is a directory, not a CAN log file"
                                                          : "cannot open file: " + why);
  }
  if (util::open_file_size(fd.get(), path_) == 0)
    throw util::InputError(path_, 0, "", "file is empty (0 bytes)");
  fd_ = fd.release();
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  buffer_.resize(std::clamp<std::size_t>(block_bytes, 1, kMaxLineBytes));
}

LineSource::~LineSource() {
  if (fd_ >= 0) ::close(fd_);
}

bool LineSource::refill() {
  if (eof_) return false;
  const std::size_t tail = end_ - begin_;
  if (begin_ > 0) {
    if (tail > 0) std::memmove(buffer_.data(), buffer_.data() + begin_, tail);
    begin_ = 0;
    end_ = tail;
  }
  if (end_ == buffer_.size()) {
    // The unread tail fills the buffer: one line is longer than a block.
    if (buffer_.size() >= kMaxLineBytes) {
      throw util::InputError(path_, line_number_ + 1, "",
                             fmt::format("line is longer than {} bytes", kMaxLineBytes));
    }
    buffer_.resize(std::min(buffer_.size() * 2, kMaxLineBytes));
  }
  for (;;) {
    const ssize_t n = ::read(fd_, buffer_.data() + end_, buffer_.size() - end_);
    if (n > 0) {
      end_ += static_cast<std::size_t>(n);
      return true;
    }
    if (n == 0) {
      eof_ = true;
      return false;
    }
    if (errno != EINTR) {
      throw util::InputError(path_, line_number_ + 1, "",
                             fmt::format("read failed: {}", std::strerror(errno)));
    }
  }
}

bool LineSource::next(std::string_view& line) {
  for (;;) {
    const char* start = buffer_.data() + begin_;
    const std::size_t avail = end_ - begin_;
    const void* newline =
        avail > scanned_ ? std::memchr(start + scanned_, '\n', avail - scanned_) : nullptr;
    std::size_t length = 0;
    if (newline != nullptr) {
      length = static_cast<std::size_t>(static_cast<const char*>(newline) - start);
      begin_ += length + 1;
    } else {
      scanned_ = avail;
      if (refill()) continue;
      if (avail == 0) return false;
      start = buffer_.data() + begin_;  // refill() may have moved the tail to the front
      length = avail;                   // last line without a terminator
      begin_ = end_;
    }
    scanned_ = 0;
    if (length > 0 && start[length - 1] == '\r') --length;
    line = std::string_view(start, length);
    if (at_start_) {
      at_start_ = false;
      if (line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
    }
    ++line_number_;
    return true;
  }
}

}  // namespace headroom::can
