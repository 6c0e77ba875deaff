#include "headroom/util/exclusive_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "headroom/util/output_path.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::util {
namespace {

// The whole file: this line, then the holder's pid right-aligned in a fixed width (blank when
// nobody holds it). Every write has the same length, so a reader never sees the file shrink.
constexpr std::string_view kHeader = "headroom lock file (flock); the holder's pid:\n";
constexpr int kPidWidth = 20;
// How long a reader waits out a file that its creator has not written yet, or a holder that has
// not yet written its pid: both are a few system calls away.
constexpr int kSettleTries = 100;
constexpr auto kSettlePause = std::chrono::milliseconds(10);

[[noreturn]] void throw_errno(const std::string& what, const std::filesystem::path& file) {
  throw std::system_error(errno, std::generic_category(),
                          fmt::format("{} '{}'", what, printable_path(file)));
}

std::string read_all(int fd) {
  std::string text;
  char buffer[256];
  for (off_t offset = 0;;) {
    const auto got = ::pread(fd, buffer, sizeof buffer, offset);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return text;
    text.append(buffer, static_cast<std::size_t>(got));
    offset += got;
  }
}

bool is_headroom_lock(const std::string& text) { return text.rfind(kHeader, 0) == 0; }

std::optional<long> holder_pid(const std::string& text) {
  if (!is_headroom_lock(text)) return std::nullopt;
  const auto field = text.substr(kHeader.size(), kPidWidth);
  const auto first = field.find_first_not_of(' ');
  if (first == std::string::npos) return std::nullopt;
  try {
    return std::stol(field.substr(first));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The file's text once it is what `settled` wants, waiting out a creator or a new holder that is
// between taking the file and writing it; after that, the text as it is.
template <typename Settled>
std::string settled_text(int fd, Settled settled) {
  std::string text = read_all(fd);
  for (int tries = 0; !settled(text) && tries < kSettleTries; ++tries) {
    std::this_thread::sleep_for(kSettlePause);
    text = read_all(fd);
  }
  return text;
}

// The lock file opened for reading and writing: created (and marked as headroom's at once) when
// absent; refused when it is a symlink or not a regular file.
int open_lock_file(const std::filesystem::path& file, bool& created) {
  int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  created = fd >= 0;
  if (fd < 0 && errno == EEXIST) fd = ::open(file.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && (errno == ELOOP || errno == EISDIR))
    throw std::runtime_error(
        fmt::format("{} is a link or a directory where headroom keeps its lock file; refusing to "
                    "use it (move it away)",
                    printable_path(file)));
  if (fd < 0) throw_errno("cannot open lock file", file);
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(fd);
    throw std::runtime_error(
        fmt::format("{} is not a regular file; headroom keeps its lock file there (move it away)",
                    printable_path(file)));
  }
  return fd;
}

// Whether `file` still names the inode open as `fd`: a holder removes the lock file when it lets
// go, so a process that was waiting on the removed inode holds a lock nobody else can see.
bool still_names(const std::filesystem::path& file, int fd) {
  struct stat open_status {};
  struct stat named_status {};
  return ::fstat(fd, &open_status) == 0 && ::lstat(file.c_str(), &named_status) == 0 &&
         open_status.st_dev == named_status.st_dev && open_status.st_ino == named_status.st_ino;
}

}  // namespace

ExclusiveLock::ExclusiveLock(std::filesystem::path file, std::string what, WhenLocked when_locked)
    : file_(std::move(file)), what_(std::move(what)) {
  require_storage_location(file_, "the lock file for the " + what_);
  bool said_waiting = false;
  for (;;) {
    bool created = false;
    fd_ = open_lock_file(file_, created);
    try {
      if (created) write_holder(false);
      // Empty only between another process's creation and its first write.
      if (!is_headroom_lock(settled_text(fd_, [](const std::string& t) { return !t.empty(); })))
        throw std::runtime_error(fmt::format(
            "{} exists and is not a headroom lock file; refusing to lock or change it (move it "
            "away: headroom locks the {} with a file of that name)",
            printable_path(file_), what_));
      if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK) throw_errno("cannot lock", file_);
        const auto pid =
            holder_pid(settled_text(fd_, [](const std::string& t) { return holder_pid(t); }));
        const auto holder = pid ? fmt::format("headroom process {}", *pid)
                                : std::string("another headroom process");
        if (when_locked == WhenLocked::kFail)
          throw std::runtime_error(
              fmt::format("the {} is in use by {} (lock file {}); wait until it ends, or pass "
                          "--wait-for-lock to wait for it",
                          what_, holder, printable_path(file_)));
        if (!said_waiting) {
          fmt::print(stderr, "waiting for {} to release the {} ({})\n", holder, what_,
                     printable_path(file_));
          std::fflush(stderr);
          said_waiting = true;
        }
        while (::flock(fd_, LOCK_EX) != 0)
          if (errno != EINTR) throw_errno("cannot lock", file_);
      }
      if (still_names(file_, fd_)) {
        write_holder(true);
        return;
      }
    } catch (...) {
      ::close(fd_);
      throw;
    }
    ::close(fd_);  // the holder removed the file as it let go: lock the next one
  }
}

ExclusiveLock::~ExclusiveLock() {
  // Removed while still held, so that nothing headroom made stays beside a user's files; a
  // process waiting on this inode sees the removal (still_names) and locks a new file.
  if (::unlink(file_.c_str()) != 0) {
    try {
      write_holder(false);
    } catch (...) {  // the lock goes with the descriptor either way
    }
  }
  ::close(fd_);
}

void ExclusiveLock::write_holder(bool held) const {
  const std::string text = fmt::format(
      "{}{:>{}}\n", kHeader, held ? std::to_string(::getpid()) : std::string(), kPidWidth);
  if (::pwrite(fd_, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
    throw_errno("cannot write lock file", file_);
  struct stat status {};
  if (::fstat(fd_, &status) == 0 && status.st_size > static_cast<off_t>(text.size()))
    static_cast<void>(::ftruncate(fd_, static_cast<off_t>(text.size())));
}

}  // namespace headroom::util
