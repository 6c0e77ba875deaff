#include "headroom/util/file_writer.hpp"

#include "headroom/util/kill_injection.hpp"
#include "headroom/util/output_path.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/regular_file.hpp"
#include "headroom/util/stale_temporaries.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <fmt/format.h>
#include <cerrno>
#include <cstring>
#include <system_error>

namespace headroom::util {
namespace {

// `error` is the errno of the call that failed, read before anything else can change it.
[[noreturn]] void throw_io(const std::string& what, const std::filesystem::path& path, int error) {
  throw std::system_error(error, std::generic_category(),
                          fmt::format("{} '{}'", what, printable_path(path)));
}

[[noreturn]] void throw_io(const std::string& what, const std::filesystem::path& path) {
  throw_io(what, path, errno);
}

void write_all(int fd, const std::byte* data, std::size_t size, const std::filesystem::path& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_io("cannot write", path);
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

// A rename replaces whatever has the destination's name: a symbolic link someone planted there
// (config.json -> ~/.bashrc) would be gone, and a FIFO or device the same. Only a regular file, or
// nothing, may be replaced; a second hard link is fine, as the rename leaves the other name's
// file as it was.
void require_replaceable_by_rename(const std::filesystem::path& path) {
  struct stat named {};
  if (::lstat(path.c_str(), &named) != 0) {
    if (errno == ENOENT) return;
    throw_io("cannot stat", path);
  }
  // A directory is left to rename(2), which never replaces one with a file (EISDIR).
  if (!S_ISREG(named.st_mode) && !S_ISDIR(named.st_mode))
    throw std::runtime_error(fmt::format(
        "{}: {} is there, not a regular file; headroom replaces only a file of its own (move it "
        "away)",
        printable_path(path), file_type_name(named.st_mode)));
}

}  // namespace

struct ChecksummedFileWriter::HashState {
  XXH3_state_t* state = XXH3_createState();
  ~HashState() { XXH3_freeState(state); }
};

ChecksummedFileWriter::ChecksummedFileWriter(std::filesystem::path path, std::size_t buffer_bytes,
                                             bool compute_checksum)
    : path_(std::move(path)),
      buffer_(buffer_bytes),
      hash_(compute_checksum ? std::make_unique<HashState>() : nullptr) {
  // Never through a link or into a FIFO, device or second hard link at the name: the file is
  // headroom's own (a temporary, an array in a staging directory, a scratch file).
  fd_ = create_for_writing(path_).release();
  if (hash_) XXH3_64bits_reset(hash_->state);
}

ChecksummedFileWriter::~ChecksummedFileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void ChecksummedFileWriter::write(std::span<const std::byte> bytes) {
  // An empty span may have a null data(), which memcpy must not be given even for 0 bytes.
  if (bytes.empty()) return;
  if (hash_) XXH3_64bits_update(hash_->state, bytes.data(), bytes.size());
  bytes_written_ += bytes.size();
  if (bytes.size() >= buffer_.size()) {
    flush_buffer();
    write_all(fd_, bytes.data(), bytes.size(), path_);
    return;
  }
  if (buffered_ + bytes.size() > buffer_.size()) flush_buffer();
  std::memcpy(buffer_.data() + buffered_, bytes.data(), bytes.size());
  buffered_ += bytes.size();
}

void ChecksummedFileWriter::flush_buffer() {
  if (buffered_ == 0) return;
  write_all(fd_, buffer_.data(), buffered_, path_);
  buffered_ = 0;
}

void ChecksummedFileWriter::close(bool durable) {
  if (fd_ < 0) return;
  flush_buffer();
  if (durable && ::fsync(fd_) != 0) throw_io("cannot fsync", path_);
  if (::close(fd_) != 0) {
    fd_ = -1;
    throw_io("cannot close", path_);
  }
  fd_ = -1;
}

std::uint64_t ChecksummedFileWriter::checksum() const {
  return hash_ ? XXH3_64bits_digest(hash_->state) : 0;
}

void fsync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw_io("cannot open directory", dir);
  const int rc = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (rc != 0) throw_io("cannot fsync directory", dir, error);
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  const auto directory = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  // Otherwise the error named the temporary ("cannot open for writing 'x.tmp-headroom-…'").
  std::error_code directory_error;
  if (!std::filesystem::is_directory(directory, directory_error))
    throw std::runtime_error(fmt::format(
        "cannot write '{}': '{}' is not a directory{}", printable_path(path),
        printable_path(directory),
        std::filesystem::exists(std::filesystem::symlink_status(directory, directory_error))
            ? ""
            : " (nothing is there; create it first)"));
  require_storage_location(path, "the file");
  require_replaceable_by_rename(path);  // before anything is written beside it
  remove_stale_temporaries(path);       // what a killed run left of this file
  const auto temporary = temporary_path_for(path);
  try {
    ChecksummedFileWriter writer(temporary);
    const auto bytes = std::as_bytes(std::span(content.data(), content.size()));
    if (kill_armed_while_writing(path)) {
      // HEADROOM_INJECT_KILL=checkpoint-write:N (kill_injection.hpp): die as a kill mid-write
      // leaves things, half a temporary on disk and the old file in place.
      writer.write(bytes.first(bytes.size() / 2));
      writer.close();
      kill_this_process();
    }
    writer.write(bytes);
    writer.close();
    require_replaceable_by_rename(path);  // again: the write took time
    std::error_code ec;
    std::filesystem::rename(temporary, path, ec);
    if (ec)
      throw std::system_error(ec, fmt::format("cannot rename into '{}'", printable_path(path)));
  } catch (...) {
    // A full disk or a failed rename must not leave the temporary behind.
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw;
  }
  fsync_directory(directory);
}

std::string checksum_hex(std::uint64_t checksum) { return fmt::format("{:016x}", checksum); }

std::uint64_t checksum_file(const std::filesystem::path& path) {
  // A FIFO would block this read and a device never end it: only a regular file is read.
  const int fd = open_regular_for_reading(path).release();
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  std::vector<std::byte> buffer(1 << 20);
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      const int error = errno;
      if (error == EINTR) continue;
      XXH3_freeState(state);
      ::close(fd);
      throw_io("cannot read", path, error);
    }
    if (n == 0) break;
    XXH3_64bits_update(state, buffer.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  const std::uint64_t digest = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return digest;
}

std::uint64_t checksum_bytes(std::span<const std::byte> bytes) {
  return XXH3_64bits(bytes.data(), bytes.size());
}

}  // namespace headroom::util
