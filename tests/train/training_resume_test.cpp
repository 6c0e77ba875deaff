// A training run killed at an exact point (HEADROOM_INJECT_KILL: at an epoch's end, or while that
// epoch's last.pt is being written) resumes after the last epoch whose last.pt is whole, and ends
// with the uninterrupted run's result, exactly; a finished run is recognised and not retrained.
//
// The kills come from the run itself, not from polling metrics.jsonl, so each lands at the same
// point every time, and each test checks where the rerun resumed (result.json's resumed_after),
// not only that it said "resuming": a rerun that silently trained from scratch ends with the same
// result and would pass a test of the result alone. Mutation seen to fail: resumable_training()
// returning false (every rerun starts over, ignoring last.pt) fails both kill tests on
// resumed_after and on the log's "after epoch N".
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "headroom/train/families/model_checkpoint.hpp"
#include "injected_kill.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

constexpr int kEpochs = 4;

std::vector<nlohmann::json> read_metrics(const std::filesystem::path& file) {
  return testing::read_metrics(file, "epoch");
}

nlohmann::json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

std::string train_command(const std::filesystem::path& store, const std::filesystem::path& runs,
                          int epochs = kEpochs, const std::string& extra = "") {
  return std::string(HEADROOM_BINARY) + " normal --store " + store.string() + " --runs-dir " +
         runs.string() +
         " --preset gat,student --patience 6 --batch-size 8 --threads 1 --progress false"
         " --max-epochs " +
         std::to_string(epochs) + " " + extra;
}

class TrainingResume : public ::testing::Test {
 protected:
  // One store and one uninterrupted run, the reference every killed and resumed run must match.
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    store_ = testing::build_synthetic_store(dir_->path(), 30000);
    straight_status_ =
        testing::run_command(train_command(store_, dir_->path() / "straight"), &straight_output_);
  }
  static void TearDownTestSuite() { delete dir_; }

  static std::filesystem::path stage_of(const std::filesystem::path& runs) {
    return runs / "store" / "student_normal";
  }

  // The resumed stage's record says it resumed after `epochs` epochs, in result.json and its log.
  static void expect_resumed_after(const std::filesystem::path& stage, std::int64_t epochs,
                                   const std::string& rerun_output) {
    const auto result = read_json(stage / "result.json");
    ASSERT_TRUE(result.is_object()) << testing::read_bytes(stage / "result.json");
    EXPECT_EQ(result["training"]["resumed_after"], epochs) << result.dump();
    EXPECT_NE(rerun_output.find("after epoch " + std::to_string(epochs) + "\n"), std::string::npos)
        << rerun_output;
  }

  // Epoch by epoch, the best epoch and loss, and best.pt's weights: the uninterrupted run's.
  static void expect_uninterrupted_result(const std::filesystem::path& stage) {
    const auto straight = stage_of(dir_->path() / "straight");
    const auto a = read_metrics(straight / "metrics.jsonl");
    const auto b = read_metrics(stage / "metrics.jsonl");
    ASSERT_EQ(a.size(), static_cast<std::size_t>(kEpochs));
    ASSERT_EQ(b.size(), static_cast<std::size_t>(kEpochs));
    for (std::size_t e = 0; e < a.size(); ++e) {
      EXPECT_EQ(b[e]["epoch"], e);
      EXPECT_EQ(a[e]["train_loss"], b[e]["train_loss"]) << "epoch " << e + 1;
      EXPECT_EQ(a[e]["validation_loss"], b[e]["validation_loss"]) << "epoch " << e + 1;
    }
    const auto result_a = read_json(straight / "result.json")["training"];
    const auto result_b = read_json(stage / "result.json")["training"];
    for (const char* field : {"epochs", "best_epoch", "best_validation_loss", "best_metrics"})
      EXPECT_EQ(result_a[field], result_b[field]) << field;
    auto model_a = train::load_gat_checkpoint(straight / "best.pt", torch::kCPU);
    auto model_b = train::load_gat_checkpoint(stage / "best.pt", torch::kCPU);
    const auto pa = model_a->named_parameters();
    const auto pb = model_b->named_parameters();
    ASSERT_EQ(pa.size(), pb.size());
    for (const auto& item : pa)
      EXPECT_TRUE(torch::equal(item.value(), pb[item.key()])) << item.key();
  }

  static inline testing::TempDir* dir_ = nullptr;
  static inline std::filesystem::path store_;
  static inline int straight_status_ = -1;
  static inline std::string straight_output_;
};

TEST_F(TrainingResume, AKillAtAnEpochsEndResumesAfterThatEpochToTheUninterruptedResult) {
  ASSERT_EQ(straight_status_, 0) << straight_output_;
  const auto runs = dir_->path() / "epoch-end";
  const auto stage = stage_of(runs);
  const auto log = dir_->path() / "epoch-end.log";
  ASSERT_EQ(testing::run_with_injected_kill(train_command(store_, runs), "epoch-end:2", log),
            testing::killed_by_sigkill())
      << testing::read_bytes(log);
  // Dead once epoch 2 was durable, before epoch 3 began.
  EXPECT_EQ(read_metrics(stage / "metrics.jsonl").size(), 2U);
  EXPECT_TRUE(std::filesystem::exists(stage / "last.pt"));
  EXPECT_FALSE(std::filesystem::exists(stage / "result.json"));

  std::string output;
  ASSERT_EQ(testing::run_command(train_command(store_, runs), &output), 0) << output;
  expect_resumed_after(stage, 2, output);
  expect_uninterrupted_result(stage);

  // A finished run is not retrained.
  ASSERT_EQ(testing::run_command(train_command(store_, runs), &output), 0) << output;
  EXPECT_NE(output.find("already complete"), std::string::npos) << output;
  EXPECT_EQ(read_metrics(stage / "metrics.jsonl").size(), static_cast<std::size_t>(kEpochs));
}

TEST_F(TrainingResume, AKillWhileLastPtIsWrittenResumesFromTheEpochBefore) {
  ASSERT_EQ(straight_status_, 0) << straight_output_;
  const auto runs = dir_->path() / "checkpoint-write";
  const auto stage = stage_of(runs);
  const auto log = dir_->path() / "checkpoint-write.log";
  ASSERT_EQ(testing::run_with_injected_kill(train_command(store_, runs), "checkpoint-write:2", log),
            testing::killed_by_sigkill())
      << testing::read_bytes(log);
  // Epoch 2's metrics line precedes its last.pt, which the kill cut in half: the half lies in a
  // temporary, and last.pt still holds epoch 1.
  EXPECT_EQ(read_metrics(stage / "metrics.jsonl").size(), 2U);
  const auto partial = testing::temporaries_of(stage / "last.pt");
  ASSERT_EQ(partial.size(), 1U);
  EXPECT_GT(std::filesystem::file_size(partial.front()), 0U);
  EXPECT_LT(std::filesystem::file_size(partial.front()),
            std::filesystem::file_size(stage / "last.pt"));

  std::string output;
  ASSERT_EQ(testing::run_command(train_command(store_, runs), &output), 0) << output;
  expect_resumed_after(stage, 1, output);
  EXPECT_TRUE(testing::temporaries_of(stage / "last.pt").empty())
      << "the killed write's temporary was left behind";
  expect_uninterrupted_result(stage);
}

TEST_F(TrainingResume, AMalformedKillInjectionIsRefusedNamingTheVariable) {
  for (const std::string value : {"epoch-end", "epoch-end:0", "epoch-end:2x", "midway:2"}) {
    const auto runs = dir_->path() / "malformed";
    std::string output;
    EXPECT_EQ(testing::run_command(
                  "HEADROOM_INJECT_KILL=" + value + " " + train_command(store_, runs), &output),
              1)
        << value;
    EXPECT_NE(output.find("HEADROOM_INJECT_KILL='" + value + "'"), std::string::npos) << output;
    EXPECT_FALSE(std::filesystem::exists(stage_of(runs) / "metrics.jsonl")) << "it trained";
  }
}

TEST_F(TrainingResume, DifferentConfigurationInTheSameDirectoryIsRefused) {
  const auto runs = dir_->path() / "configuration";
  ASSERT_EQ(testing::run_command(train_command(store_, runs, 1)), 0);
  std::string output;
  EXPECT_NE(testing::run_command(train_command(store_, runs, 1, "--learning-rate 0.01"), &output),
            0);
  EXPECT_NE(output.find("different configuration"), std::string::npos) << output;
  EXPECT_NE(output.find("learning_rate"), std::string::npos) << output;
  EXPECT_EQ(
      testing::run_command(train_command(store_, runs, 1, "--learning-rate 0.01 --resume false")),
      0);
}

}  // namespace
}  // namespace headroom
