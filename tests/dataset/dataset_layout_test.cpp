// Scanning a dataset directory: attack types from file and directory names, links inside splits.
#include "headroom/dataset/dataset_layout.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace headroom::dataset {
namespace {

using headroom::testing::TempDir;
using headroom::testing::write_text_file;

std::vector<std::string> relative_paths(const DatasetLayout& layout) {
  std::vector<std::string> paths;
  for (const auto& file : layout.files) paths.push_back(file.relative_path);
  return paths;
}

const DatasetFile& file_named(const DatasetLayout& layout, const std::string& relative_path) {
  const auto it = std::find_if(layout.files.begin(), layout.files.end(),
                               [&](const auto& f) { return f.relative_path == relative_path; });
  if (it == layout.files.end()) throw std::runtime_error("not scanned: " + relative_path);
  return *it;
}

TEST(AttackTypeNames, ARecordingNumberIsDroppedWhateverItsSeparator) {
  EXPECT_EQ(attack_type_from_file_name("DoS-1.csv"), "dos");
  EXPECT_EQ(attack_type_from_file_name("DoS_1.csv"), "dos");  // was "dos_1": a type of its own
  EXPECT_EQ(attack_type_from_file_name("targeted_payload_fuzzing-2.parquet"),
            "targeted_payload_fuzzing");
  EXPECT_EQ(attack_type_from_file_name("targeted_payload_fuzzing_2.parquet"),
            "targeted_payload_fuzzing");
  EXPECT_EQ(attack_type_from_file_name("attack-free-1.csv"), "attack-free");
  // A vehicle after the last '-' is dropped as before; a word after '_' is part of the name.
  EXPECT_EQ(attack_type_from_file_name("DoS-sonata.parquet"), "dos");
  EXPECT_EQ(attack_type_from_file_name("attack-free-kia.csv"), "attack-free");
  EXPECT_EQ(attack_type_from_file_name("gear_dataset.csv"), "gear_dataset");
  EXPECT_EQ(attack_type_from_file_name("fuzzing.csv"), "fuzzing");
  EXPECT_EQ(attack_type_from_file_name("2.csv"), "2");

  EXPECT_EQ(attack_type_from_directory_name("DoS_2"), "dos");
  EXPECT_EQ(attack_type_from_directory_name("Attack-Free"), "attack-free");
  EXPECT_EQ(attack_type_from_directory_name("rpm-spoofing"), "rpm-spoofing");
}

TEST(AttackTypeNames, TheLayoutNamesThemWithAttackTypeFromDirectory) {
  TempDir dir;
  write_text_file(dir / "data/train_01/normal_run.txt", "x");
  write_text_file(dir / "data/test_01/RPM_Spoofing/capture-3.csv", "x");
  write_text_file(dir / "data/test_01/gear-2.csv", "x");  // directly in the split: its name
  ScanOptions options;
  EXPECT_EQ(file_named(scan_dataset(dir / "data", options), "test_01/RPM_Spoofing/capture-3.csv")
                .attack_type,
            "capture");
  options.attack_type_from = AttackTypeSource::kDirectory;
  const auto layout = scan_dataset(dir / "data", options);
  EXPECT_EQ(file_named(layout, "test_01/RPM_Spoofing/capture-3.csv").attack_type, "rpm_spoofing");
  EXPECT_EQ(file_named(layout, "test_01/gear-2.csv").attack_type, "gear");
}

// A directory linked into a split used to be skipped without a word: its files are read now.
TEST(DatasetLinks, ALinkedDirectoryInsideASplitIsRead) {
  TempDir dir;
  write_text_file(dir / "elsewhere/drives/DoS-1.csv", "x");
  write_text_file(dir / "elsewhere/drives/deeper/fuzzing-1.csv", "x");
  write_text_file(dir / "data/train_01/own-1.csv", "x");
  std::filesystem::create_directory_symlink(dir / "elsewhere/drives", dir / "data/train_01/linked");
  const auto layout = scan_dataset(dir / "data");
  EXPECT_EQ(
      relative_paths(layout),
      (std::vector<std::string>{"train_01/linked/DoS-1.csv", "train_01/linked/deeper/fuzzing-1.csv",
                                "train_01/own-1.csv"}));
  EXPECT_EQ(layout.train_file_count, 3u);
  const auto& linked = file_named(layout, "train_01/linked/DoS-1.csv");
  EXPECT_TRUE(std::filesystem::exists(linked.path));
  EXPECT_EQ(linked.size_bytes, 1u);
  EXPECT_EQ(linked.attack_type, "dos");
  EXPECT_TRUE(layout.skipped.empty());
}

TEST(DatasetLinks, ACycleAndASecondLinkAreReadOnceAndSaidSo) {
  TempDir dir;
  write_text_file(dir / "data/train_01/a/DoS-1.csv", "x");
  // a/loop -> a (a cycle); b -> a (a second way to the same directory); a broken link.
  std::filesystem::create_directory_symlink(dir / "data/train_01/a", dir / "data/train_01/a/loop");
  std::filesystem::create_directory_symlink(dir / "data/train_01/a", dir / "data/train_01/b");
  std::filesystem::create_symlink(dir / "nowhere.csv", dir / "data/train_01/gone.csv");
  const auto layout = scan_dataset(dir / "data");
  EXPECT_EQ(relative_paths(layout), std::vector<std::string>{"train_01/a/DoS-1.csv"});
  ASSERT_EQ(layout.skipped.size(), 3u);
  EXPECT_EQ(layout.skipped[0].relative_path, "train_01/a/loop");
  EXPECT_NE(layout.skipped[0].reason.find("the same directory as train_01/a"), std::string::npos)
      << layout.skipped[0].reason;
  EXPECT_NE(layout.skipped[0].reason.find("link cycle"), std::string::npos);
  EXPECT_EQ(layout.skipped[1].relative_path, "train_01/b");
  EXPECT_EQ(layout.skipped[2].relative_path, "train_01/gone.csv");
  EXPECT_EQ(layout.skipped[2].reason, "not read: a broken link");
}

TEST(DatasetLinks, EachSplitMayLinkTheSameDirectory) {
  // hcrl_sa ships the same attack-free drives in two training splits; a link per split is the
  // same thing, and each split reads it (duplicate detection happens while preprocessing).
  TempDir dir;
  write_text_file(dir / "shared/attack-free-1.csv", "x");
  std::filesystem::create_directories(dir / "data/train_01");
  std::filesystem::create_directories(dir / "data/train_02");
  std::filesystem::create_directory_symlink(dir / "shared", dir / "data/train_01/drives");
  std::filesystem::create_directory_symlink(dir / "shared", dir / "data/train_02/drives");
  const auto layout = scan_dataset(dir / "data");
  EXPECT_EQ(relative_paths(layout),
            (std::vector<std::string>{"train_01/drives/attack-free-1.csv",
                                      "train_02/drives/attack-free-1.csv"}));
  EXPECT_TRUE(layout.skipped.empty());
}

// Each used to be skipped without a word: a FIFO (reading it could block forever), a link to
// /dev/zero (reading it would never end), a compressed log, any other file; and a test split with
// nothing to read.
TEST(DatasetSkipped, EveryEntryNotReadAndEveryEmptySplitIsNamedWithItsReason) {
  TempDir dir;
  write_text_file(dir / "data/train_01/normal-1.csv", "x");
  ASSERT_EQ(::mkfifo((dir / "data/train_01/pipe.csv").c_str(), 0600), 0);
  std::filesystem::create_symlink("/dev/zero", dir / "data/train_01/zero.csv");
  write_text_file(dir / "data/train_01/dos-1.csv.gz", "\x1f\x8b");
  write_text_file(dir / "data/train_01/notes.md", "x");
  std::filesystem::create_directories(dir / "data/test_01_empty/nested");
  const auto layout = scan_dataset(dir / "data");
  EXPECT_EQ(relative_paths(layout), std::vector<std::string>{"train_01/normal-1.csv"});
  std::map<std::string, std::string> reasons;
  for (const auto& entry : layout.skipped) reasons[entry.relative_path] = entry.reason;
  ASSERT_EQ(reasons.size(), 5U) << ::testing::PrintToString(reasons);
  EXPECT_EQ(reasons["train_01/pipe.csv"], "not read: a FIFO (named pipe), not a regular file");
  EXPECT_EQ(reasons["train_01/zero.csv"], "not read: a character device, not a regular file");
  EXPECT_NE(reasons["train_01/dos-1.csv.gz"].find("a compressed file (.gz)"), std::string::npos)
      << reasons["train_01/dos-1.csv.gz"];
  EXPECT_NE(reasons["train_01/notes.md"].find("not a CAN log by its name"), std::string::npos)
      << reasons["train_01/notes.md"];
  EXPECT_NE(reasons["test_01_empty"].find("test split holds no CAN log file"), std::string::npos)
      << reasons["test_01_empty"];
}

// A name that is not UTF-8 used to end preprocessing with "[json.exception.type_error.316]": the
// manifest records names as text. Such a file, directory or split is not read, and said so.
TEST(DatasetSkipped, NamesThatAreNotUtf8AreNotReadAndSaidSo) {
  TempDir dir;
  write_text_file(dir / "data/train_01/normal-1.csv", "x");
  write_text_file(dir / "data/train_01/bad\xff-1.csv", "x");
  write_text_file(dir / "data/train_01/dir\xfe/DoS-1.csv", "x");
  write_text_file(dir / "data/test_\xff/DoS-2.csv", "x");
  const auto layout = scan_dataset(dir / "data");
  EXPECT_EQ(relative_paths(layout), std::vector<std::string>{"train_01/normal-1.csv"});
  std::vector<std::string> skipped;
  for (const auto& entry : layout.skipped) {
    skipped.push_back(entry.relative_path);
    EXPECT_NE(entry.reason.find("not UTF-8"), std::string::npos) << entry.reason;
  }
  EXPECT_EQ(skipped,
            (std::vector<std::string>{"test_\xff", "train_01/bad\xff-1.csv", "train_01/dir\xfe"}));
  // The dataset's own path cannot be left out: an error that names it, escaped.
  write_text_file(dir / "data\xff/train_01/normal-1.csv", "x");
  try {
    scan_dataset(dir / "data\xff");
    ADD_FAILURE() << "a dataset path that is not UTF-8 was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("data\\xFF' is not UTF-8"), std::string::npos) << e.what();
  }
}

TEST(DatasetSkipped, AReasonQuotesAPathEscaped) {
  TempDir dir;
  write_text_file(dir / "data/train_01/a\x1b[31m/DoS-1.csv", "x");
  std::filesystem::create_directory_symlink(dir / "data/train_01/a\x1b[31m",
                                            dir / "data/train_01/b");
  const auto layout = scan_dataset(dir / "data");
  ASSERT_EQ(layout.skipped.size(), 1U);
  EXPECT_NE(layout.skipped[0].reason.find("train_01/a\\x1B[31m"), std::string::npos)
      << layout.skipped[0].reason;
}

}  // namespace
}  // namespace headroom::dataset
