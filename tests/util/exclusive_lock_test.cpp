// The lock that keeps a second process out of a run directory or a store being built: taken and
// released with its object, named by pid when taken, waited for on request, and never laid on a
// file that headroom did not write.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "headroom/util/exclusive_lock.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

using util::ExclusiveLock;
using util::WhenLocked;

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The message of the exception that taking the lock throws, or "" when it was taken.
std::string refusal(const std::filesystem::path& file) {
  try {
    ExclusiveLock lock(file, "test place", WhenLocked::kFail);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(ExclusiveLock, HeldLockRefusesASecondHolderNamingThePid) {
  testing::TempDir dir;
  const auto file = dir / "headroom.lock";
  {
    ExclusiveLock held(file, "test place", WhenLocked::kFail);
    // flock excludes every other open of the file, in this process too.
    const auto message = refusal(file);
    EXPECT_NE(
        message.find("test place is in use by headroom process " + std::to_string(::getpid())),
        std::string::npos)
        << message;
    EXPECT_NE(message.find("--wait-for-lock"), std::string::npos) << message;
  }
  // Released with its object, and its file removed: nothing stays beside a user's files.
  EXPECT_FALSE(std::filesystem::exists(file));
  EXPECT_EQ(refusal(file), "");
  EXPECT_EQ(refusal(file), "");
}

TEST(ExclusiveLock, WaitBlocksUntilTheHolderReleases) {
  testing::TempDir dir;
  const auto file = dir / "headroom.lock";
  std::optional<ExclusiveLock> held;
  held.emplace(file, "test place", WhenLocked::kFail);
  std::atomic<bool> taken{false};
  std::atomic<bool> release{false};
  std::thread waiter([&] {
    ExclusiveLock lock(file, "test place", WhenLocked::kWait);
    taken = true;
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(taken) << "the waiter took a lock that was held";
  held.reset();  // removes the file the waiter opened
  while (!taken) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // The waiter holds the lock at the path, not on the removed file: a third process is kept out.
  EXPECT_NE(refusal(file), "");
  release = true;
  waiter.join();
  EXPECT_FALSE(std::filesystem::exists(file));
}

TEST(ExclusiveLock, AKilledHoldersFileIsReusedAndRemoved) {
  testing::TempDir dir;
  const auto file = dir / "headroom.lock";
  // What a holder killed mid-run leaves: the file with its pid, and no lock.
  testing::write_text_file(
      file, "headroom lock file (flock); the holder's pid:\n" + std::string(14, ' ') + "999999\n");
  EXPECT_EQ(refusal(file), "");
  EXPECT_FALSE(std::filesystem::exists(file));
}

TEST(ExclusiveLock, AUsersFileOfThatNameIsNeitherLockedNorChanged) {
  testing::TempDir dir;
  const auto file = dir / "headroom.lock";
  const std::string notes = "my own notes\n";
  testing::write_text_file(file, notes);
  const auto message = refusal(file);
  EXPECT_NE(message.find("not a headroom lock file"), std::string::npos) << message;
  EXPECT_EQ(read_text(file), notes);

  // An empty file is not headroom's either: headroom writes its marker as it creates the file.
  const auto empty = dir / "empty.lock";
  testing::write_text_file(empty, "");
  EXPECT_NE(refusal(empty).find("not a headroom lock file"), std::string::npos);
  EXPECT_EQ(read_text(empty), "");
}

TEST(ExclusiveLock, ASymlinkOrDirectoryInItsPlaceIsRefused) {
  testing::TempDir dir;
  const auto target = dir / "target.txt";
  testing::write_text_file(target, "keep me\n");
  std::filesystem::create_symlink(target, dir / "link.lock");
  EXPECT_NE(refusal(dir / "link.lock").find("link or a directory"), std::string::npos);
  EXPECT_EQ(read_text(target), "keep me\n");
  std::filesystem::create_directory(dir / "dir.lock");
  EXPECT_NE(refusal(dir / "dir.lock").find("link or a directory"), std::string::npos);
}

}  // namespace
}  // namespace headroom
