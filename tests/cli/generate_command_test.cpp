// `headroom generate` end to end, through the real binary.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_support.hpp"

namespace headroom {
namespace {

namespace fs = std::filesystem;

std::string generate(const std::string& args, int* status) {
  std::string output;
  *status = testing::run_command(std::string(HEADROOM_BINARY) + " generate " + args, &output);
  return output;
}

TEST(SyntheticGenerateCli, WritesTheDatasetAndReportsASummary) {
  testing::TempDir dir;
  const std::string out = (dir / "data").string();
  int status = -1;
  const std::string output = generate("--out " + out + " --frames 5000 --seed 3", &status);
  ASSERT_EQ(status, 0) << output;
  EXPECT_NE(output.find("7 files, 5000 frames"), std::string::npos) << output;
  EXPECT_NE(output.find("ECUs"), std::string::npos) << output;
  EXPECT_NE(output.find("test_02_known_vehicle_unknown_attack/spoofing-1.csv"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "data" / "train_01_attack_free" / "attack-free-1.csv"));
}

TEST(SyntheticGenerateCli, ExistingDirectoryNeedsForce) {
  testing::TempDir dir;
  const std::string out = (dir / "data").string();
  int status = -1;
  generate("--out " + out + " --frames 2000", &status);
  ASSERT_EQ(status, 0);

  const std::string refused = generate("--out " + out + " --frames 2000 --seed 9", &status);
  EXPECT_EQ(status, 1);
  EXPECT_EQ(refused, "headroom: error: " + out + " exists (use --force to replace it)\n");

  const std::string replaced =
      generate("--out " + out + " --frames 2000 --seed 9 --force", &status);
  EXPECT_EQ(status, 0) << replaced;
  EXPECT_NE(replaced.find("seed 9"), std::string::npos) << replaced;
}

TEST(SyntheticGenerateCli, HelpListsTheOptionsAndBadFrameCountsAreRejected) {
  int status = -1;
  const std::string help = generate("--help", &status);
  EXPECT_EQ(status, 0);
  for (const char* option : {"--out", "--frames", "--seed", "--force", "data/synthetic"}) {
    EXPECT_NE(help.find(option), std::string::npos) << option;
  }
  testing::TempDir dir;
  generate("--out " + (dir / "data").string() + " --frames 10", &status);
  EXPECT_NE(status, 0);
  EXPECT_FALSE(fs::exists(dir / "data"));
}

}  // namespace
}  // namespace headroom
