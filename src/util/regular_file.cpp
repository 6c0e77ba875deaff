#include "headroom/util/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "headroom/util/byte_size.hpp"
#include "headroom/util/printable_text.hpp"

// POSIX calls throughout, not std::filesystem: the LibTorch wheel exports its own copies of the
// std::filesystem operations (staged_directory.hpp, remove_tree), and these functions sit on the
// reading and writing paths of every binary.
namespace headroom::util {
namespace {

[[noreturn]] void throw_errno(int error, const std::string& what,
                              const std::filesystem::path& path) {
  throw std::system_error(error, std::generic_category(),
                          fmt::format("{} '{}'", what, printable_path(path)));
}

std::string not_regular(unsigned mode) { return file_type_name(mode) + ", not a regular file"; }

// "100 B"; "64.0 MiB (67108865 bytes)", exact where the rounded size could equal a bound.
std::string size_text(std::uint64_t bytes) {
  const auto rounded = format_byte_size(static_cast<double>(bytes));
  return bytes < 1024 ? rounded : fmt::format("{} ({} bytes)", rounded, bytes);
}

// Clears O_NONBLOCK, set only so that opening a FIFO could not block: reads of a regular file
// never block anyway, but a caller handing the descriptor on (fdopen, Arrow) must get a plain one.
bool make_blocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0;
}

// Why a file of status `info` at `path` is not one headroom may write ("" when it may).
std::string why_not_own(const std::filesystem::path& path, const struct stat& info,
                        const char* purpose) {
  if (!S_ISREG(info.st_mode))
    return fmt::format("{}: {}; headroom {} only a regular file of its own there (move it away)",
                       printable_path(path), not_regular(info.st_mode), purpose);
  // A second name for the same file is a way to make headroom write somebody else's file, as a
  // symbolic link is (`ln ~/victim.txt RUN/log.txt`).
  if (info.st_nlink > 1)
    return fmt::format(
        "{}: has {} hard links, so writing it would change a file elsewhere too; headroom {} only "
        "a file of its own there (move it away)",
        printable_path(path), info.st_nlink, purpose);
  return "";
}

// Opens `path` for writing with `flags` added, never following a link at `path` and never
// blocking on a FIFO, and refuses (before any byte changes) what is not headroom's to write.
FileDescriptor open_own_file_for_writing(const std::filesystem::path& path, int flags,
                                         const char* purpose) {
  FileDescriptor fd(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | flags, 0644));
  if (!fd) {
    const int error = errno;
    // ELOOP: a link at the name (O_NOFOLLOW); ENXIO: a FIFO nobody reads (O_NONBLOCK); EISDIR,
    // ETXTBSY...: whatever it is, say what lies there when it is not a regular file.
    struct stat named {};
    if (::lstat(path.c_str(), &named) == 0 && !S_ISREG(named.st_mode))
      throw std::runtime_error(why_not_own(path, named, purpose));
    throw_errno(error, "cannot open for writing", path);
  }
  struct stat opened {};
  if (::fstat(fd.get(), &opened) != 0) throw_errno(errno, "cannot stat", path);
  if (auto why = why_not_own(path, opened, purpose); !why.empty()) throw std::runtime_error(why);
  if (!make_blocking(fd.get())) throw_errno(errno, "cannot set flags of", path);
  return fd;
}

}  // namespace

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

int FileDescriptor::release() noexcept {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

std::string file_type_name(unsigned st_mode) {
  switch (st_mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a directory";
    case S_IFIFO:
      return "a FIFO (named pipe)";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFSOCK:
      return "a socket";
    case S_IFLNK:
      return "a symbolic link";
    default:
      return "not a file of a known type";
  }
}

FileDescriptor try_open_regular_for_reading(const std::filesystem::path& path, std::string* why,
                                            bool* missing) {
  if (missing != nullptr) *missing = false;
  // O_NONBLOCK: opening a FIFO for reading blocks until a writer comes; with it the open returns
  // at once and the fstat below refuses the FIFO.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd) {
    const int error = errno;
    if (missing != nullptr) *missing = error == ENOENT || error == ENOTDIR;
    *why = std::strerror(error);
    return {};
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    *why = fmt::format("cannot stat: {}", std::strerror(errno));
    return {};
  }
  if (!S_ISREG(info.st_mode)) {
    *why = not_regular(info.st_mode);
    return {};
  }
  if (!make_blocking(fd.get())) {
    *why = fmt::format("cannot set flags: {}", std::strerror(errno));
    return {};
  }
  return fd;
}

FileDescriptor open_regular_for_reading(const std::filesystem::path& path) {
  std::string why;
  auto fd = try_open_regular_for_reading(path, &why);
  if (!fd) throw std::runtime_error(fmt::format("{}: cannot read: {}", printable_path(path), why));
  return fd;
}

std::uint64_t open_file_size(int fd, const std::filesystem::path& path) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) throw_errno(errno, "cannot stat", path);
  return static_cast<std::uint64_t>(info.st_size);
}

std::string read_whole(int fd, const std::filesystem::path& path, std::uint64_t max_bytes) {
  const auto too_large = [&](const std::string& size) {
    return std::runtime_error(
        fmt::format("{}: {}, larger than the {} headroom reads of such a file",
                    printable_path(path), size, format_byte_size(static_cast<double>(max_bytes))));
  };
  const std::uint64_t size = open_file_size(fd, path);
  if (size > max_bytes) throw too_large(size_text(size));
  std::string text;
  text.reserve(static_cast<std::size_t>(size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno(errno, "cannot read", path);
    }
    if (n == 0) break;
    // A file that grows while it is read is held to the same bound.
    if (text.size() + static_cast<std::size_t>(n) > max_bytes)
      throw too_large("more than that while it was read");
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

FileDescriptor open_for_append(const std::filesystem::path& path) {
  return open_own_file_for_writing(path, O_APPEND, "appends to");
}

FileDescriptor create_for_writing(const std::filesystem::path& path) {
  auto fd = open_own_file_for_writing(path, 0, "writes");
  // Emptied only now that it is known to be a file headroom may write (O_TRUNC would have acted
  // at the open, before any check).
  if (::ftruncate(fd.get(), 0) != 0) throw_errno(errno, "cannot truncate", path);
  return fd;
}

void require_own_file_or_absent(const std::filesystem::path& path) {
  struct stat named {};
  if (::lstat(path.c_str(), &named) != 0) {
    if (errno == ENOENT) return;
    throw_errno(errno, "cannot stat", path);
  }
  if (auto why = why_not_own(path, named, "writes"); !why.empty()) throw std::runtime_error(why);
}

void write_all(int fd, std::string_view bytes, const std::filesystem::path& path) {
  const char* data = bytes.data();
  std::size_t size = bytes.size();
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno(errno, "cannot write", path);
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

}  // namespace headroom::util
