// The ownership recogniser's parts (foreign_entries, require_replaceable with a kind) and the
// staging directories built on them: a directory is headroom's only when its record validates and
// it holds nothing else, and a killed run's staging directory is removed only when its marker and
// every entry in it prove it is one.
#include "headroom/util/directory_ownership.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "headroom/util/output_path.hpp"
#include "headroom/util/staged_directory.hpp"
#include "headroom/util/stale_temporaries.hpp"
#include "test_support.hpp"

namespace headroom::util {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_text_file;

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string message_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "<no error>";
}

// A toy kind: its record is `record.txt` holding "ours", and its writer makes `data/<n>.bin`.
bool is_toy_entry(const fs::path& relative, bool is_directory) {
  if (relative == "record.txt") return !is_directory;
  if (relative == "data") return is_directory;
  return !is_directory && relative.parent_path() == "data" && relative.extension() == ".bin";
}

DirectoryKind toy_kind() {
  return {"toy output",
          [](const fs::path& directory) -> std::string {
            if (read_text(directory / "record.txt") != "ours") return "no record of ours";
            return describe_foreign_entries(foreign_entries(directory, is_toy_entry));
          },
          is_toy_entry};
}

void write_toy(const fs::path& directory) {
  write_text_file(directory / "record.txt", "ours");
  write_text_file(directory / "data" / "1.bin", "one");
}

TEST(ForeignEntries, NamesWhatTheWriterDoesNotMakeAndNeverFollowsLinks) {
  TempDir dir;
  write_toy(dir / "out");
  EXPECT_TRUE(foreign_entries(dir / "out", is_toy_entry).empty());

  write_text_file(dir / "out" / ".ssh" / "id_rsa", "secret");
  write_text_file(dir / "out" / "data" / "notes.txt", "mine");
  fs::create_directory_symlink(dir.path(), dir / "out" / "data" / "9.bin");
  const auto found = foreign_entries(dir / "out", is_toy_entry, 10);
  // The foreign directory is named once, not descended; the link is foreign whatever its name.
  EXPECT_EQ(found.size(), 3U);
  for (const char* name : {".ssh", "data/notes.txt", "data/9.bin"})
    EXPECT_NE(std::find(found.begin(), found.end(), fs::path(name)), found.end()) << name;
  EXPECT_EQ(foreign_entries(dir / "out", is_toy_entry, 1).size(), 1U);
  EXPECT_NE(describe_foreign_entries(found).find("'.ssh'"), std::string::npos);
}

TEST(RequireReplaceable, NamesWhyADirectoryIsNotTheKinds) {
  TempDir dir;
  EXPECT_NO_THROW(require_replaceable(dir / "absent", toy_kind()));
  fs::create_directory(dir / "empty");
  EXPECT_NO_THROW(require_replaceable(dir / "empty", toy_kind()));
  write_toy(dir / "toy");
  EXPECT_NO_THROW(require_replaceable(dir / "toy", toy_kind()));

  // The record's name alone is not enough: its content must be the writer's, and nothing else
  // may be there.
  write_text_file(dir / "forged" / "record.txt", "");
  EXPECT_NE(message_of([&] {
              require_replaceable(dir / "forged", toy_kind());
            }).find("is not a toy output that headroom wrote (no record of ours)"),
            std::string::npos);
  write_toy(dir / "added");
  write_text_file(dir / "added" / "thesis" / "ch1.tex", "years");
  EXPECT_NE(message_of([&] {
              require_replaceable(dir / "added", toy_kind());
            }).find("it holds 'thesis' that headroom did not write"),
            std::string::npos);
  write_text_file(dir / "file", "precious");
  EXPECT_THROW(require_replaceable(dir / "file", toy_kind()), std::runtime_error);
  fs::create_directory_symlink(dir / "toy", dir / "link");
  EXPECT_THROW(require_replaceable(dir / "link", toy_kind()), std::runtime_error);
}

// Runs `write` in a child that then dies without cleaning up, as a killed run does.
void in_a_killed_child(const std::function<void()>& write) {
  const pid_t pid = fork();
  if (pid == 0) {
    try {
      write();
    } catch (...) {
      _exit(2);
    }
    _exit(0);  // no destructors: the staging directory stays
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

std::vector<std::string> names_in(const fs::path& directory) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(StagedDirectory, RemovesAKilledRunsStagingOnlyWhenItHoldsNothingElse) {
  TempDir dir;
  in_a_killed_child([&] {
    // Two writers of the same target, neither ever destroyed (the kill).
    const auto* first = new StagedDirectory(dir / "out", false, toy_kind());
    write_text_file(first->staging() / "data" / "1.bin", "partial");
    const auto* second = new StagedDirectory(dir / "out", false, toy_kind());
    write_text_file(second->staging() / "data" / "2.bin", "partial");
  });
  ASSERT_EQ(names_in(dir.path()).size(), 2U);
  // Someone put a file into one of them after the kill: that one stays, the other goes.
  for (const auto& name : names_in(dir.path()))
    if (fs::exists(dir / name / "tree" / "data" / "1.bin"))
      write_text_file(dir / name / "tree" / "x", "mine");
  {
    StagedDirectory staged(dir / "out", false, toy_kind());
    write_toy(staged.staging());
    staged.commit();
  }
  const auto names = names_in(dir.path());
  ASSERT_EQ(names.size(), 2U);  // "out" and the staging directory holding the user's file
  EXPECT_EQ(names[0], "out");
  EXPECT_EQ(read_text(dir / names[1] / "tree" / "x"), "mine");
}

TEST(StagedDirectory, NeverTouchesNamesThatOnlyLookLikeATemporary) {
  TempDir dir;
  // Old-style names, a name of the new form whose writer died but which has no marker, and one
  // whose marker was copied from another staging directory.
  write_text_file(dir / "out.tmp-2023" / "thesis" / "ch1.tex", "years");
  write_text_file(dir / "out.tmp-999999999" / "data" / "1.bin", "mine");
  in_a_killed_child([&] { new StagedDirectory(dir / "other", false, toy_kind()); });
  fs::path other_staging;
  for (const auto& name : names_in(dir.path()))
    if (name.starts_with("other.tmp-headroom-")) other_staging = dir / name;
  ASSERT_FALSE(other_staging.empty());
  const std::string token = other_staging.filename().string().substr(std::string("other").size());
  const auto unmarked = dir / ("out" + token);
  write_text_file(unmarked / "tree" / "data" / "1.bin", "mine");
  const auto copied = dir / ("out.tmp-headroom-999999999-00000000000000ff");
  write_text_file(copied / "tree" / "data" / "1.bin", "mine");
  fs::copy_file(other_staging / ".headroom-staging", copied / ".headroom-staging");
  const auto before = names_in(dir.path());
  {
    StagedDirectory staged(dir / "out", false, toy_kind());
    write_toy(staged.staging());
    staged.commit();
  }
  auto after = names_in(dir.path());
  after.erase(std::find(after.begin(), after.end(), "out"));
  EXPECT_EQ(after, before);
  EXPECT_EQ(read_text(dir / "out.tmp-2023" / "thesis" / "ch1.tex"), "years");
  EXPECT_EQ(read_text(unmarked / "tree" / "data" / "1.bin"), "mine");
  EXPECT_EQ(read_text(copied / "tree" / "data" / "1.bin"), "mine");
}

// Issue 45, item 11: `kill -9` between the staging directory's mkdir and its marker's write left
// an empty directory that every later run warned about and never removed. What such a kill can
// leave (the directory alone, or with its marker empty or cut short) now goes; the same with a
// live writer, with anything else in it, or with a marker that is not the start of its own, stays.
TEST(StagedDirectory, RemovesWhatAWriterKilledWhileMakingItsStagingLeft) {
  TempDir dir;
  const std::string dead = "out.tmp-headroom-999999999-";  // above any pid_max: never running
  const auto marker_of = [](const std::string& name) {
    return "headroom staging directory " + name + "\n";
  };
  const std::string empty = dead + "00000000000000a1";
  const std::string empty_marker = dead + "00000000000000a2";
  const std::string cut_marker = dead + "00000000000000a3";
  fs::create_directory(dir / empty);
  write_text_file(dir / empty_marker / ".headroom-staging", "");
  write_text_file(dir / cut_marker / ".headroom-staging", marker_of(cut_marker).substr(0, 12));

  const std::string live = "out.tmp-headroom-" + std::to_string(::getpid()) + "-00000000000000b1";
  const std::string foreign = dead + "00000000000000b2";
  const std::string other_marker = dead + "00000000000000b3";
  const std::string linked_marker = dead + "00000000000000b4";
  fs::create_directory(dir / live);
  write_text_file(dir / foreign / "notes.txt", "mine");
  write_text_file(dir / other_marker / ".headroom-staging", "my own text");
  write_text_file(dir / "elsewhere", "");
  fs::create_directory(dir / linked_marker);
  fs::create_symlink(dir / "elsewhere", dir / linked_marker / ".headroom-staging");
  {
    StagedDirectory staged(dir / "out", false, toy_kind());
    write_toy(staged.staging());
    staged.commit();
  }
  for (const auto& gone : {empty, empty_marker, cut_marker})
    EXPECT_FALSE(fs::exists(dir / gone)) << gone;
  for (const auto& kept : {live, foreign, other_marker, linked_marker})
    EXPECT_TRUE(fs::exists(dir / kept)) << kept;
  EXPECT_EQ(read_text(dir / foreign / "notes.txt"), "mine");
  EXPECT_TRUE(fs::exists(dir / "elsewhere"));
}

TEST(StagedDirectory, ReplacingDeletesTheOldTreeOnlyIfItIsStillHeadroomsAlone) {
  TempDir dir;
  write_toy(dir / "out");
  StagedDirectory staged(dir / "out", true, toy_kind());
  write_text_file(staged.staging() / "record.txt", "ours");
  write_text_file(staged.staging() / "data" / "2.bin", "new");
  staged.commit();
  EXPECT_EQ(read_text(dir / "out" / "data" / "2.bin"), "new");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"out"});

  // A directory that is not the kind's is refused when the writer starts and again at the swap.
  write_text_file(dir / "home" / "record.txt", "ours");
  write_text_file(dir / "home" / ".ssh" / "id_rsa", "secret");
  EXPECT_NE(message_of([&] {
              StagedDirectory(dir / "home", true, toy_kind());
            }).find("it holds '.ssh' that headroom did not write"),
            std::string::npos);
  StagedDirectory late(dir / "late", true, toy_kind());
  write_toy(late.staging());
  write_toy(dir / "late");
  write_text_file(dir / "late" / "ch1.tex", "years");  // added while the new tree was built
  EXPECT_THROW(late.commit(), std::runtime_error);
  EXPECT_EQ(read_text(dir / "late" / "ch1.tex"), "years");
  EXPECT_EQ(read_text(dir / "home" / ".ssh" / "id_rsa"), "secret");
}

}  // namespace
}  // namespace headroom::util
