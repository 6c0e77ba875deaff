// A kill during an atomic write leaves `<file>.tmp-<pid>` behind; the next write of that file
// removes it once its process is gone, and touches nothing else.
#include "headroom/util/stale_temporaries.hpp"

#include <gtest/gtest.h>
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

TEST(StaleTemporaries, TheNextAtomicWriteRemovesWhatADeadWriterLeft) {
  testing::TempDir dir;
  const auto target = dir / "best.pt";
  const auto dead = dir / ("best.pt.tmp-" + std::to_string(dead_pid()));
  const auto live = dir / "best.pt.tmp-1";  // pid 1 always runs
  const auto other_target = dir / ("last.pt.tmp-" + std::to_string(dead_pid()));
  const auto not_ours = dir / "best.pt.tmp-notes";
  for (const auto& file : {dead, live, other_target, not_ours})
    testing::write_text_file(file, "partial");
  std::filesystem::create_directories(dir / ("best.pt.tmp-" + std::to_string(dead_pid())) / "x");

  write_file_atomically(target, "complete");

  EXPECT_FALSE(std::filesystem::exists(dead));
  EXPECT_TRUE(std::filesystem::exists(live));          // its writer may still be writing
  EXPECT_TRUE(std::filesystem::exists(other_target));  // another file's: its own write cleans it
  EXPECT_TRUE(std::filesystem::exists(not_ours));      // not a name headroom writes
  std::size_t temporaries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    temporaries += entry.path().filename().string().rfind("best.pt.tmp-", 0) == 0 ? 1 : 0;
  EXPECT_EQ(temporaries, 2U);  // the live one and the notes; the dead directory went too
  std::ifstream in(target);
  std::string content;
  std::getline(in, content);
  EXPECT_EQ(content, "complete");
}

TEST(StaleTemporaries, OnlyExactPidSuffixesCount) {
  EXPECT_TRUE(is_stale_temporary("x.tmp-" + std::to_string(dead_pid()), "x.tmp-"));
  EXPECT_FALSE(is_stale_temporary("x.tmp-1", "x.tmp-"));
  EXPECT_FALSE(is_stale_temporary("x.tmp-", "x.tmp-"));
  EXPECT_FALSE(is_stale_temporary("x.tmp-12a", "x.tmp-"));
  EXPECT_FALSE(is_stale_temporary("x.tmp-1234567890", "x.tmp-"));
  EXPECT_FALSE(is_stale_temporary("y.tmp-" + std::to_string(dead_pid()), "x.tmp-"));
}

}  // namespace
}  // namespace headroom::util
