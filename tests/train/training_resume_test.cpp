// A training run killed at an arbitrary point continues from its last checkpoint and ends with the
// same result as an uninterrupted run; a finished run is recognised and not retrained.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "headroom/train/families/model_checkpoint.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

std::vector<nlohmann::json> read_metrics(const std::filesystem::path& file) {
  return testing::read_metrics(file, "epoch");
}

std::string train_command(const std::filesystem::path& store, const std::filesystem::path& runs,
                          int epochs = 6, const std::string& extra = "") {
  return std::string(HEADROOM_BINARY) + " normal --store " + store.string() + " --runs-dir " +
         runs.string() +
         " --preset gat,student --patience 6 --batch-size 8 --threads 1 --progress false"
         " --max-epochs " +
         std::to_string(epochs) + " " + extra;
}

TEST(TrainingResume, KilledRunEndsLikeAnUninterruptedOne) {
  testing::TempDir dir;
  const auto store = testing::build_synthetic_store(dir.path(), 30000);
  const auto straight = dir / "straight";
  const auto resumed = dir / "resumed";
  ASSERT_EQ(testing::run_command(train_command(store, straight)), 0);

  const auto run_dir = resumed / "store" / "student_normal";
  ASSERT_TRUE(
      testing::kill_after_epochs(train_command(store, resumed), run_dir / "metrics.jsonl", 2))
      << "the run finished before it could be killed";
  EXPECT_FALSE(std::filesystem::exists(run_dir / "result.json"));
  std::string output;
  ASSERT_EQ(testing::run_command(train_command(store, resumed), &output), 0) << output;
  EXPECT_NE(output.find("resuming"), std::string::npos) << output;

  const auto a = read_metrics(straight / "store" / "student_normal" / "metrics.jsonl");
  const auto b = read_metrics(run_dir / "metrics.jsonl");
  ASSERT_EQ(a.size(), 6U);
  ASSERT_EQ(b.size(), 6U);
  for (std::size_t e = 0; e < a.size(); ++e) {
    EXPECT_EQ(b[e]["epoch"], e);
    EXPECT_DOUBLE_EQ(a[e]["train_loss"].get<double>(), b[e]["train_loss"].get<double>()) << e;
    EXPECT_DOUBLE_EQ(a[e]["validation_loss"].get<double>(), b[e]["validation_loss"].get<double>());
  }
  auto model_a =
      train::load_gat_checkpoint(straight / "store" / "student_normal" / "best.pt", torch::kCPU);
  auto model_b = train::load_gat_checkpoint(run_dir / "best.pt", torch::kCPU);
  const auto pa = model_a->named_parameters();
  const auto pb = model_b->named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (const auto& item : pa) EXPECT_TRUE(torch::equal(item.value(), pb[item.key()])) << item.key();

  // A finished run is not retrained.
  ASSERT_EQ(testing::run_command(train_command(store, resumed), &output), 0) << output;
  EXPECT_NE(output.find("already complete"), std::string::npos) << output;
  EXPECT_EQ(read_metrics(run_dir / "metrics.jsonl").size(), 6U);
}

TEST(TrainingResume, DifferentConfigurationInTheSameDirectoryIsRefused) {
  testing::TempDir dir;
  const auto store = testing::build_synthetic_store(dir.path(), 20000);
  const auto runs = dir / "runs";
  ASSERT_EQ(testing::run_command(train_command(store, runs, 1)), 0);
  std::string output;
  EXPECT_NE(testing::run_command(train_command(store, runs, 1, "--learning-rate 0.01"), &output),
            0);
  EXPECT_NE(output.find("different configuration"), std::string::npos) << output;
  EXPECT_NE(output.find("learning_rate"), std::string::npos) << output;
  EXPECT_EQ(
      testing::run_command(train_command(store, runs, 1, "--learning-rate 0.01 --resume false")),
      0);
}

}  // namespace
}  // namespace headroom
