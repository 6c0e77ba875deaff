// `headroom preprocess --shard I/N` and `--assemble` end to end on the binary, as a SLURM array
// runs them: the same command line for every step but the last flag.
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

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

class ShardedPreprocessCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string output;
    ASSERT_EQ(run_command(fmt::format("'{}' generate --out '{}' --frames 6000 --seed 3",
                                      HEADROOM_BINARY, (dir_ / "data").string()),
                          &output),
              0)
        << output;
  }

  // `headroom preprocess DATA --out STORE --threads 1 --no-progress` followed by `extra`.
  int preprocess(const std::string& store, const std::string& extra, std::string* output) {
    return run_command(
        fmt::format("'{}' preprocess '{}' --out '{}' --threads 1 --no-progress {}", HEADROOM_BINARY,
                    (dir_ / "data").string(), (dir_ / store).string(), extra),
        output);
  }

  testing::TempDir dir_;
};

TEST_F(ShardedPreprocessCli, ThreeShardsThenAssembleGiveTheSingleProcessStore) {
  std::string output;
  ASSERT_EQ(preprocess("single", "", &output), 0) << output;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(preprocess("sharded", fmt::format("--shard {}/3", i), &output), 0) << output;
    EXPECT_NE(output.find(fmt::format("shard {}/3: preprocessed", i)), std::string::npos) << output;
    EXPECT_TRUE(fs::exists(dir_ / fmt::format("sharded.parts/{}-of-3/part.json", i)));
  }
  ASSERT_EQ(preprocess("sharded", "--assemble", &output), 0) << output;
  EXPECT_NE(output.find("assembled 3 parts"), std::string::npos) << output;
  EXPECT_FALSE(fs::exists(dir_ / "sharded.parts"));
  for (const auto& entry : fs::directory_iterator(dir_ / "single"))
    EXPECT_TRUE(read_bytes(entry.path()) == read_bytes(dir_ / "sharded" / entry.path().filename()))
        << entry.path().filename() << " differs";
}

TEST_F(ShardedPreprocessCli, BadShardFlagsAreOneLineErrors) {
  std::string output;
  EXPECT_NE(preprocess("s", "--shard 3/3", &output), 0);
  EXPECT_NE(output.find("--shard 3/3: the shard index counts from 0, so it must be below 3"),
            std::string::npos)
      << output;
  EXPECT_NE(preprocess("s", "--shard two/4", &output), 0);
  EXPECT_NE(output.find("--shard must be I/N"), std::string::npos) << output;
  EXPECT_NE(preprocess("s", "--shard 0/2 --assemble", &output), 0);
  EXPECT_NE(output.find("excludes"), std::string::npos) << output;
  EXPECT_FALSE(fs::exists(dir_ / "s.parts"));

  // Assembling with a flag the shards did not use names it.
  ASSERT_EQ(preprocess("s", "--shard 0/1", &output), 0) << output;
  EXPECT_NE(preprocess("s", "--assemble --val-fraction 0.3", &output), 0);
  EXPECT_NE(output.find("--val-fraction 0.2 (this command: 0.3)"), std::string::npos) << output;
}

}  // namespace
}  // namespace headroom
