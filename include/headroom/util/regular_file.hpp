// Opening files so that what lies at a path cannot turn a read or a write into something else.
//
// Reading: a FIFO would block the open (or the read) forever, and a device such as /dev/zero or
// /dev/urandom never ends; so every file headroom reads is opened without blocking, checked to be
// a regular file (after following links: a link the user made to an input is read) and, where it
// is read whole, bounded in size.
//
// Writing and appending: inside a directory headroom owns (a run directory, a store, a TensorBoard
// directory) a symbolic link or a second hard link at a file's name would send the write to
// somebody else's file. Those are refused (O_NOFOLLOW, and the link count), and so is anything
// that is not a regular file.
//
// Errors are std::runtime_error (std::system_error for a failing system call) whose one-line
// message names the path (escaped: printable_text.hpp) and the reason. Stateless and thread-safe;
// a FileDescriptor is owned by one thread at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace headroom::util {

// One open file descriptor, closed with its owner. Move-only.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
  ~FileDescriptor();
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.release()) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  // Gives the descriptor up to the caller (who then closes it); the object is left empty.
  int release() noexcept;

 private:
  int fd_ = -1;
};

// What a file of mode `st_mode` is, for messages: "a FIFO (named pipe)", "a character device",
// "a block device", "a socket", "a directory", "a symbolic link", "a regular file".
std::string file_type_name(unsigned st_mode);

// Bounds for files read whole. The default suits every manifest, JSON record and configuration
// file headroom reads (the largest, an evaluation.json, is a few MiB); callers that read larger
// files on purpose pass their own bound.
inline constexpr std::uint64_t kDefaultMaxReadBytes = std::uint64_t{64} << 20;

// Opens `path` for reading (links followed) without ever blocking: O_NONBLOCK for the open, then
// cleared. Anything but a regular file is refused. On failure returns an empty descriptor and sets
// `*why` to the reason, without the path ("No such file or directory", "a FIFO (named
// pipe), not a regular file"); `*missing` (when given) says whether nothing is at the path.
FileDescriptor try_open_regular_for_reading(const std::filesystem::path& path, std::string* why,
                                            bool* missing = nullptr);

// The same, throwing std::runtime_error "PATH: cannot read: REASON".
FileDescriptor open_regular_for_reading(const std::filesystem::path& path);

// The size in bytes of the open regular file `fd`.
std::uint64_t open_file_size(int fd, const std::filesystem::path& path);

// Reads the whole of the open file `fd` (`path` names it in errors). A file larger than
// `max_bytes` (by its size, or growing past it while read) is refused naming both sizes.
std::string read_whole(int fd, const std::filesystem::path& path,
                       std::uint64_t max_bytes = kDefaultMaxReadBytes);

// Opens `path` for appending, creating it (mode 0644) when absent. Refuses a symbolic link at
// `path`, a file with more than one hard link and anything but a regular file, naming the path and
// why, without writing a byte. For files headroom keeps appending to in directories it owns
// (log.txt, metrics.jsonl, TensorBoard event files).
FileDescriptor open_for_append(const std::filesystem::path& path);

// Opens `path` for writing from its start, creating it (mode 0644) or emptying it. The same
// refusals as open_for_append, checked before anything is truncated.
FileDescriptor create_for_writing(const std::filesystem::path& path);

// Throws what open_for_append would when something is at `path` that headroom must not write
// (a symbolic link, a file with a second hard link, anything but a regular file); nothing at
// `path` is fine. For a file headroom reads back before it replaces or appends to it.
void require_own_file_or_absent(const std::filesystem::path& path);

// Writes all of `bytes` to `fd` (retrying short writes); throws std::system_error naming `path`.
void write_all(int fd, std::string_view bytes, const std::filesystem::path& path);

}  // namespace headroom::util
