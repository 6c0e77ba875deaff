// `--force` and the output paths of every writing command, end to end on the binary: the input
// dataset, unrelated directories and regular files survive every mistyped output path.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_support.hpp"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::run_command;
using testing::TempDir;
using testing::write_text_file;

std::string headroom(const std::string& args) {
  return fmt::format("'{}' {} 2>&1", HEADROOM_BINARY, args);
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The names and sizes of every file under `root`, so a test sees any file removed or changed.
std::string tree_listing(const fs::path& root) {
  std::string listing;
  for (const auto& entry : fs::recursive_directory_iterator(root))
    if (entry.is_regular_file())
      listing +=
          fmt::format("{} {}\n", fs::relative(entry.path(), root).string(), entry.file_size());
  return listing;
}

class OutputSafetyCli : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = dir_ / "data";
    std::string output;
    ASSERT_EQ(run_command(headroom(fmt::format("generate --out '{}' --frames 3000 --seed 2",
                                               data_.string())),
                          &output),
              0)
        << output;
    before_ = tree_listing(data_);
    ASSERT_FALSE(before_.empty());
  }

  int preprocess(const fs::path& out, std::string* output) {
    return run_command(headroom(fmt::format("preprocess '{}' --out '{}' --force --no-progress",
                                            data_.string(), out.string())),
                       output);
  }

  TempDir dir_;
  fs::path data_;
  std::string before_;
};

TEST_F(OutputSafetyCli, PreprocessForceNeverReplacesTheDataset) {
  std::string output;
  EXPECT_NE(preprocess(data_, &output), 0);
  EXPECT_NE(output.find("is the dataset"), std::string::npos) << output;
  EXPECT_EQ(tree_listing(data_), before_);

  EXPECT_NE(preprocess(data_ / "store", &output), 0);
  EXPECT_NE(output.find("is inside the dataset"), std::string::npos) << output;
  EXPECT_FALSE(fs::exists(data_ / "store"));

  EXPECT_NE(preprocess(dir_.path(), &output), 0);
  EXPECT_NE(output.find("contains the dataset"), std::string::npos) << output;
  EXPECT_EQ(tree_listing(data_), before_);
}

TEST_F(OutputSafetyCli, PreprocessForceKeepsUnrelatedDirectoriesAndFiles) {
  write_text_file(dir_ / "thesis" / "chapter1.tex", "years of work");
  std::string output;
  EXPECT_NE(preprocess(dir_ / "thesis", &output), 0);
  EXPECT_NE(output.find("not a graph store"), std::string::npos) << output;
  EXPECT_EQ(read_text(dir_ / "thesis" / "chapter1.tex"), "years of work");

  write_text_file(dir_ / "notes.txt", "keep me");
  EXPECT_NE(preprocess(dir_ / "notes.txt", &output), 0);
  EXPECT_EQ(read_text(dir_ / "notes.txt"), "keep me");

  // What --force is for: replacing a store, and filling an empty directory.
  ASSERT_EQ(preprocess(dir_ / "store", &output), 0) << output;
  ASSERT_EQ(preprocess(dir_ / "store", &output), 0) << output;
  fs::create_directory(dir_ / "empty");
  EXPECT_EQ(preprocess(dir_ / "empty", &output), 0) << output;
  EXPECT_EQ(tree_listing(data_), before_);
}

TEST_F(OutputSafetyCli, RunRefusesAStoreOrRunsDirOverlappingItsInputs) {
  std::string output;
  EXPECT_NE(
      run_command(headroom(fmt::format("run '{}' --store '{}' --max-epochs 1 --progress false",
                                       data_.string(), data_.string())),
                  &output),
      0);
  EXPECT_NE(output.find("is the dataset"), std::string::npos) << output;
  EXPECT_EQ(tree_listing(data_), before_);

  EXPECT_NE(run_command(headroom(fmt::format(
                            "run '{}' --store '{}' --runs-dir '{}' --max-epochs 1 --progress false",
                            data_.string(), (dir_ / "store").string(), data_.string())),
                        &output),
            0);
  EXPECT_NE(output.find("the run directories (--runs-dir)"), std::string::npos) << output;
  EXPECT_EQ(tree_listing(data_), before_);
  EXPECT_FALSE(fs::exists(dir_ / "store")) << "nothing is written before the paths are checked";
}

TEST_F(OutputSafetyCli, TrainingStageRefusesARunsDirInsideTheStore) {
  std::string output;
  ASSERT_EQ(preprocess(dir_ / "store", &output), 0) << output;
  const std::string store_before = tree_listing(dir_ / "store");
  EXPECT_NE(run_command(headroom(fmt::format("autoencoder --store '{}' --runs-dir '{}' "
                                             "--max-epochs 1 --progress false",
                                             (dir_ / "store").string(),
                                             (dir_ / "store" / "runs").string())),
                        &output),
            0);
  EXPECT_NE(output.find("is inside the store"), std::string::npos) << output;
  EXPECT_EQ(tree_listing(dir_ / "store"), store_before);
}

TEST_F(OutputSafetyCli, GenerateForceKeepsAnUnrelatedDirectory) {
  write_text_file(dir_ / "photos" / "a.jpg", "jpeg");
  std::string output;
  EXPECT_NE(run_command(headroom(fmt::format("generate --out '{}' --frames 2000 --force",
                                             (dir_ / "photos").string())),
                        &output),
            0);
  EXPECT_EQ(read_text(dir_ / "photos" / "a.jpg"), "jpeg");
}

// /proc, /sys and /dev are the kernel's, not storage: every writing command refuses them by the
// file system's name before writing anything (before, `generate --out /dev/x` wrote 400,000
// frames into RAM under /dev, `generate --out /proc/x` said "0 B free" and `preprocess --out
// /proc/o` "cannot open lock file").
TEST_F(OutputSafetyCli, KernelFileSystemsAreRefusedAsOutputsByName) {
  std::string output;
  EXPECT_NE(run_command(headroom("generate --out /proc/headroom-x --frames 2000"), &output), 0);
  EXPECT_NE(output.find("/proc/headroom-x' lies on '/proc', a proc file system"), std::string::npos)
      << output;
  EXPECT_NE(run_command(headroom("generate --out /sys/headroom-x --frames 2000"), &output), 0);
  EXPECT_NE(output.find("a sysfs file system"), std::string::npos) << output;
  EXPECT_NE(preprocess("/proc/headroom-store", &output), 0);
  EXPECT_NE(output.find("a proc file system"), std::string::npos) << output;
  std::string dev_type;
  if (run_command("findmnt -n -o FSTYPE --target /dev", &dev_type) == 0 &&
      dev_type.starts_with("devtmpfs")) {
    EXPECT_NE(run_command(headroom("generate --out /dev/headroom-x --frames 2000"), &output), 0);
    EXPECT_NE(output.find("a devtmpfs file system"), std::string::npos) << output;
    EXPECT_FALSE(fs::exists("/dev/headroom-x"));
  }
  EXPECT_EQ(tree_listing(data_), before_);
}

}  // namespace
}  // namespace headroom
