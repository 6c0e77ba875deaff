// One process at a time in a place that headroom writes: a training stage's run directory, a store
// being built. The lock is flock(2) on a lock file that headroom creates and owns, so it ends with
// its process however that ends. The holder removes the file as it lets go, so nothing stays
// beside a user's files; a killed holder leaves the file behind (never the lock), which the next
// process reuses and removes. Its first line marks it as headroom's, its second holds
// the holder's pid (blank while nobody holds it), which a process that finds the lock taken names
// in its error. A file of that name that headroom did not write (no marker line), a symlink or
// anything but a regular file is refused: never locked, written or deleted.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace headroom::util {

// What a process does when another one holds the lock.
enum class WhenLocked {
  kFail,  // throw at once, naming the holder's pid
  kWait,  // say so once on stderr, then block until the holder releases it
};

// Holds the lock from construction to destruction. Not thread-safe; one object per lock file in a
// process (a second object on the same file in the same process would wait for the first).
class ExclusiveLock {
 public:
  // Creates `file` when absent (its directory must exist). `what` names the locked place in
  // messages ("run directory runs/x/teacher_autoencoder"). Throws std::runtime_error with a
  // one-line message when the lock is held and `when_locked` is kFail, or when `file` is not a
  // headroom lock file; std::system_error when the file cannot be created or read.
  ExclusiveLock(std::filesystem::path file, std::string what, WhenLocked when_locked);
  // Blanks the pid and closes the file, which releases the lock.
  ~ExclusiveLock();
  ExclusiveLock(const ExclusiveLock&) = delete;
  ExclusiveLock& operator=(const ExclusiveLock&) = delete;

  const std::filesystem::path& file() const { return file_; }

 private:
  void write_holder(bool held) const;

  std::filesystem::path file_;
  std::string what_;
  int fd_ = -1;
};

}  // namespace headroom::util
