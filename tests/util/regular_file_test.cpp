// What may lie at a path headroom reads or writes (issue 45, items 2 and 4): reads refuse FIFOs
// and devices without blocking and bound a file's size; writes and appends refuse a symbolic
// link, a second hard link and anything but a regular file, before a byte of the other file
// changes. Every refusal names the path and what is there.
#include "headroom/util/regular_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "headroom/util/file_reader.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/mapped_file.hpp"
#include "test_support.hpp"

namespace headroom::util {
namespace {

namespace fs = std::filesystem;
using testing::error_message;
using testing::TempDir;
using testing::write_text_file;

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void expect_names(const std::string& message, const fs::path& path, const std::string& what) {
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(message.find(what), std::string::npos) << message;
}

// Each used to block in open() (a FIFO) or read until memory ran out (/dev/zero). A regression
// hangs this test, which ctest's time limit then fails.
TEST(RegularFile, ReadersRefuseFifosAndDevicesAtOnceNamingThem) {
  TempDir dir;
  const auto fifo = dir / "config.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto zero = dir / "result.json";
  fs::create_symlink("/dev/zero", zero);

  expect_names(error_message([&] { read_file(fifo); }), fifo, "a FIFO (named pipe)");
  expect_names(error_message([&] { read_file(zero); }), zero, "a character device");
  expect_names(error_message([&] { read_file_if_present(fifo); }), fifo, "not a regular file");
  expect_names(error_message([&] { checksum_file(zero); }), zero, "a character device");
  expect_names(error_message([&] { MappedFile::open(fifo); }), fifo, "a FIFO (named pipe)");
  expect_names(error_message([&] { open_regular_for_reading(dir.path()); }), dir.path(),
               "a directory");
  EXPECT_FALSE(read_file_if_readable(fifo));
  EXPECT_FALSE(read_file_if_readable(zero));
}

TEST(RegularFile, ReadersFollowLinksToRegularFilesAndSayWhenNothingIsThere) {
  TempDir dir;
  write_text_file(dir / "real.toml", "[run]\n");
  fs::create_symlink(dir / "real.toml", dir / "link.toml");
  EXPECT_EQ(read_file(dir / "link.toml"), "[run]\n");
  EXPECT_FALSE(read_file_if_present(dir / "absent.json"));
  fs::create_symlink(dir / "gone", dir / "broken.json");
  EXPECT_FALSE(read_file_if_present(dir / "broken.json"));
  expect_names(error_message([&] { read_file(dir / "absent.json"); }), dir / "absent.json",
               "No such file");
}

TEST(RegularFile, AFileLargerThanItsBoundIsRefusedByNameAndSize) {
  TempDir dir;
  write_text_file(dir / "small.json", std::string(100, 'x'));
  expect_names(error_message([&] { read_file(dir / "small.json", 10); }), dir / "small.json",
               "100 B, larger than the 10 B");
  // A sparse file just past the default bound: refused before a byte is read.
  const auto huge = dir / "config.json";
  write_text_file(huge, "");
  fs::resize_file(huge, kDefaultMaxReadBytes + 1);
  expect_names(error_message([&] { read_file(huge); }), huge, "larger than the 64.0 MiB");
  EXPECT_FALSE(read_file_if_readable(huge));
  EXPECT_EQ(read_file(dir / "small.json", 100).size(), 100U);
}

// `ln -s ~/victim.txt RUN/STAGE/log.txt` made the next stage append its log to the victim.
TEST(RegularFile, AppendAndWriteRefuseLinksAndOtherFilesLeavingThemUntouched) {
  TempDir dir;
  const auto victim = dir / "victim.txt";
  write_text_file(victim, "precious\n");
  fs::create_symlink(victim, dir / "log.txt");
  expect_names(error_message([&] { open_for_append(dir / "log.txt"); }), dir / "log.txt",
               "a symbolic link, not a regular file");
  expect_names(error_message([&] { create_for_writing(dir / "log.txt"); }), dir / "log.txt",
               "a symbolic link");
  expect_names(error_message([&] { ChecksummedFileWriter writer(dir / "log.txt"); }),
               dir / "log.txt", "a symbolic link");
  fs::create_hard_link(victim, dir / "metrics.jsonl");
  expect_names(error_message([&] { open_for_append(dir / "metrics.jsonl"); }),
               dir / "metrics.jsonl", "has 2 hard links");
  expect_names(error_message([&] { create_for_writing(dir / "metrics.jsonl"); }),
               dir / "metrics.jsonl", "has 2 hard links");
  expect_names(error_message([&] { require_own_file_or_absent(dir / "metrics.jsonl"); }),
               dir / "metrics.jsonl", "has 2 hard links");
  EXPECT_EQ(read_text(victim), "precious\n");

  // A FIFO nobody reads, and a link to a device: refused, neither blocking nor written.
  ASSERT_EQ(::mkfifo((dir / "events").c_str(), 0600), 0);
  expect_names(error_message([&] { open_for_append(dir / "events"); }), dir / "events",
               "a FIFO (named pipe)");
  fs::create_symlink("/dev/null", dir / "null");
  expect_names(error_message([&] { create_for_writing(dir / "null"); }), dir / "null",
               "a symbolic link");

  // Its own files: created, appended to, rewritten.
  {
    const auto fd = open_for_append(dir / "own.txt");
    write_all(fd.get(), "one\n", dir / "own.txt");
  }
  {
    const auto fd = open_for_append(dir / "own.txt");
    write_all(fd.get(), "two\n", dir / "own.txt");
  }
  EXPECT_EQ(read_text(dir / "own.txt"), "one\ntwo\n");
  {
    const auto fd = create_for_writing(dir / "own.txt");
    write_all(fd.get(), "new\n", dir / "own.txt");
  }
  EXPECT_EQ(read_text(dir / "own.txt"), "new\n");
  EXPECT_NO_THROW(require_own_file_or_absent(dir / "own.txt"));
  EXPECT_NO_THROW(require_own_file_or_absent(dir / "absent"));
}

}  // namespace
}  // namespace headroom::util
