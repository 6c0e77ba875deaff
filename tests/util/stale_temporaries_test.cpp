// A kill during an atomic write leaves `<file>.tmp-headroom-<pid>-<token>` behind; the next write
// of that file removes it once its process is gone, and touches nothing else: not a directory, not
// a name that merely looks like a temporary (`results.tmp-2023`). A write that fails (a full disk)
// removes its own temporary.
#include "headroom/util/stale_temporaries.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "headroom/util/file_writer.hpp"
#include "test_support.hpp"

namespace headroom::util {
namespace {

// The pid of a child that has already exited (and been reaped): a process that is gone.
pid_t dead_pid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

std::string temporary_name(const std::string& target, pid_t pid,
                           const std::string& token = "0123456789abcdef") {
  return target + ".tmp-headroom-" + std::to_string(pid) + "-" + token;
}

std::vector<std::string> names_in(const std::filesystem::path& directory) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(directory))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(StaleTemporaries, TheNextAtomicWriteRemovesWhatADeadWriterLeft) {
  testing::TempDir dir;
  const auto target = dir / "best.pt";
  const auto dead = dir / temporary_name("best.pt", dead_pid());
  const auto live = dir / temporary_name("best.pt", 1);  // pid 1 always runs
  const auto other_target = dir / temporary_name("last.pt", dead_pid());
  const auto not_ours = dir / "best.pt.tmp-notes";
  const auto old_style = dir / ("best.pt.tmp-" + std::to_string(dead_pid()));
  for (const auto& file : {dead, live, other_target, not_ours, old_style})
    testing::write_text_file(file, "partial");
  // A directory of the same name form: files only here (a directory needs a staging marker).
  const auto directory = dir / temporary_name("best.pt", dead_pid(), "fedcba9876543210");
  testing::write_text_file(directory / "thesis.tex", "years");

  write_file_atomically(target, "complete");

  EXPECT_FALSE(std::filesystem::exists(dead));
  EXPECT_TRUE(std::filesystem::exists(live));          // its writer may still be writing
  EXPECT_TRUE(std::filesystem::exists(other_target));  // another file's: its own write cleans it
  EXPECT_TRUE(std::filesystem::exists(not_ours));      // not a name headroom writes
  EXPECT_TRUE(std::filesystem::exists(old_style));     // `NAME.tmp-NUMBER` proves nothing
  EXPECT_TRUE(std::filesystem::exists(directory / "thesis.tex"));
  EXPECT_EQ(names_in(dir.path()).size(), 6U);
  std::ifstream in(target);
  std::string content;
  std::getline(in, content);
  EXPECT_EQ(content, "complete");
}

TEST(StaleTemporaries, OnlyTheExactNameFormOfADeadProcessCounts) {
  const auto dead = dead_pid();
  EXPECT_TRUE(is_stale_temporary(temporary_name("x", dead), "x"));
  EXPECT_FALSE(is_stale_temporary(temporary_name("x", 1), "x"));
  EXPECT_FALSE(is_stale_temporary(temporary_name("y", dead), "x"));
  EXPECT_FALSE(is_stale_temporary("x.tmp-" + std::to_string(dead), "x"));
  EXPECT_FALSE(is_stale_temporary("x.tmp-2023", "x"));
  const std::string base = "x.tmp-headroom-" + std::to_string(dead);
  for (const auto& other :
       {base, base + "-", base + "-0123456789abcde", base + "-0123456789abcdef0",
        base + "-0123456789ABCDEF", base + "-0123456789abcdeg", std::string("x.tmp-headroom--1-0"),
        "x.tmp-headroom-0" + std::to_string(dead) + "-0123456789abcdef",
        std::string("x.tmp-headroom-1234567890-0123456789abcdef")})
    EXPECT_FALSE(is_stale_temporary(other, "x")) << other;
}

// A writer killed with -9 stays a zombie until its parent reaps it (about 2 s under some init
// processes, forever under one that never reaps): kill(pid, 0) still answers, and a rerun right
// after the kill kept the killed writer's temporaries. A zombie is a dead writer.
// (Mutation seen to fail: process_runs without the /proc state check.)
TEST(StaleTemporaries, AKilledWriterNotYetReapedIsDead) {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  // Not reaped yet: wait until the kernel shows it as a zombie.
  bool zombie = false;
  for (int i = 0; i < 500 && !zombie; ++i) {
    std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
    std::string line;
    std::getline(stat, line);
    zombie = line.find(") Z ") != std::string::npos;
    if (!zombie) usleep(10'000);
  }
  ASSERT_TRUE(zombie);
  EXPECT_TRUE(is_stale_temporary(temporary_name("x", child), "x"));
  int status = 0;
  waitpid(child, &status, 0);
}

TEST(StaleTemporaries, EveryTemporaryGetsItsOwnName) {
  const auto first = temporary_path_for("/d/best.pt");
  const auto second = temporary_path_for("/d/best.pt");
  EXPECT_NE(first, second);
  EXPECT_EQ(first.parent_path(), std::filesystem::path("/d"));
  EXPECT_TRUE(first.filename().string().starts_with("best.pt.tmp-headroom-" +
                                                    std::to_string(::getpid()) + "-"));
}

// A full disk, as the file-size limit makes one: the write fails with EFBIG.
TEST(StaleTemporaries, AFailedWriteRemovesItsTemporary) {
  testing::TempDir dir;
  const pid_t pid = fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    try {
      write_file_atomically(dir / "memory_plan.json", std::string(1 << 20, 'x'));
    } catch (const std::system_error&) {
      _exit(names_in(dir.path()).empty() ? 0 : 3);
    }
    _exit(4);  // the write should have failed
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "3: a temporary was left; 4: the write did not fail";
  EXPECT_TRUE(names_in(dir.path()).empty());
}

}  // namespace
}  // namespace headroom::util
