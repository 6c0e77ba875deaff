#include "synthetic_csv_writer.hpp"

#include <cerrno>
#include <charconv>
#include <string_view>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

#include "headroom/util/regular_file.hpp"

namespace headroom::synthetic::detail {
namespace {

constexpr std::string_view kHeader = "timestamp,arbitration_id,data_field,attack\n";
constexpr char kHex[] = "0123456789ABCDEF";

[[noreturn]] void throw_io_error(std::string_view what, const std::filesystem::path& file) {
  throw std::system_error(errno, std::generic_category(), std::string(what) + " " + file.string());
}

}  // namespace

CanCsvWriter::CanCsvWriter(const std::filesystem::path& file)
    : file_(file), buffer_(new char[kBufferBytes]) {
  // Inside the staging directory the generator made; never through a link planted there.
  fd_ = util::create_for_writing(file).release();
  used_ = kHeader.copy(buffer_.get(), kHeader.size());
}

CanCsvWriter::~CanCsvWriter() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t CanCsvWriter::format_row(const SyntheticFrame& frame, char* out) {
  char* p = out;
  char* const end = out + kMaxRowBytes;
  p = std::to_chars(p, end, frame.time_us / 1'000'000).ptr;
  *p++ = '.';
  auto micros = static_cast<std::uint32_t>(frame.time_us % 1'000'000);
  for (int i = 5; i >= 0; --i) {
    p[i] = static_cast<char>('0' + micros % 10);
    micros /= 10;
  }
  p += 6;
  *p++ = ',';
  // Uppercase hex without leading zeros, as the can-train-and-test files write IDs.
  int shift = 28;
  while (shift > 0 && ((frame.id >> shift) & 0xF) == 0) shift -= 4;
  for (; shift >= 0; shift -= 4) *p++ = kHex[(frame.id >> shift) & 0xF];
  *p++ = ',';
  for (std::size_t i = 0; i < frame.dlc; ++i) {
    *p++ = kHex[frame.data[i] >> 4];
    *p++ = kHex[frame.data[i] & 0xF];
  }
  *p++ = ',';
  *p++ = frame.label != 0 ? '1' : '0';
  *p++ = '\n';
  return static_cast<std::size_t>(p - out);
}

void CanCsvWriter::flush() {
  const char* p = buffer_.get();
  std::size_t left = used_;
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_io_error("cannot write", file_);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  used_ = 0;
}

void CanCsvWriter::finish() {
  flush();
  if (::fsync(fd_) != 0) throw_io_error("cannot sync", file_);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw_io_error("cannot close", file_);
}

}  // namespace headroom::synthetic::detail
