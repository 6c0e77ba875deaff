// A model is only used on the store it was trained on: evaluation, fusion and distillation refuse
// a checkpoint whose run recorded another store, naming what differs, and evaluation.json never
// mixes entries measured on other stores or with other decision settings.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "headroom/train/loop/run_resume.hpp"
#include "test_support.hpp"

namespace headroom::train {
namespace {

void write_run_config(const std::filesystem::path& run, const nlohmann::json& store_identity) {
  std::filesystem::create_directories(run);
  std::ofstream(run / "config.json")
      << nlohmann::json{{"config", nlohmann::json::object()},
                        {"semantic", {{"learning_rate", 0.001}, {"store", store_identity}}}}
             .dump(2);
}

TEST(TrainedStore, ACheckpointOfARunOnAnotherStoreIsRefusedNamingTheDifference) {
  testing::TempDir dir;
  const nlohmann::json trained_on = {{"content", "aaaa"}, {"graphs", 200}, {"window", 100}};
  write_run_config(dir / "run", trained_on);
  const auto checkpoint = dir / "run" / "best.pt";
  EXPECT_NO_THROW(require_trained_on(checkpoint, trained_on, "to be evaluated on"));

  auto other = trained_on;
  other["content"] = "bbbb";
  other["graphs"] = 249;
  const auto message =
      testing::error_message([&] { require_trained_on(checkpoint, other, "to be evaluated on"); });
  EXPECT_NE(message.find("best.pt: trained on another store than the one it is to be evaluated on"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(R"(store.content (was "aaaa", now "bbbb"))"), std::string::npos)
      << message;
  EXPECT_NE(message.find("store.graphs (was 200, now 249)"), std::string::npos) << message;

  // A checkpoint copied without its run's configuration cannot be checked; a configuration that
  // does not parse is an error naming it.
  EXPECT_NO_THROW(require_trained_on(dir / "alone" / "best.pt", other, "to be fused on"));
  testing::write_text_file(dir / "broken" / "config.json", "{\"semantic\": ");
  EXPECT_NE(testing::error_message([&] {
              require_trained_on(dir / "broken" / "best.pt", other, "to be fused on");
            }).find("config.json: cannot be read as JSON"),
            std::string::npos);
}

// The commands: models trained on one store, then a store rebuilt from other data under the same
// name, as a regenerated dataset leaves it.
class TrainedStoreCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    store_ = testing::build_synthetic_store(dir_->path() / "first", 20000, 3);
    other_store_ = testing::build_synthetic_store(dir_->path() / "second", 25000, 4);
    ASSERT_EQ(testing::run_command(std::string(HEADROOM_BINARY) +
                                   " autoencoder --preset vgae,student --vgae-hidden 32,16"
                                   " --latent 8 --max-epochs 1 --batch-size 128 --threads 1"
                                   " --progress false --store " +
                                   store_.string() + " --runs-dir " + runs().string()),
              0);
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::filesystem::path runs() { return dir_->path() / "runs"; }
  static std::filesystem::path model() { return runs() / "store" / "student_autoencoder"; }
  static std::string evaluation(const std::filesystem::path& store, const std::string& extra) {
    return std::string(HEADROOM_BINARY) + " evaluation --threads 1 --progress false --store " +
           store.string() + " --runs-dir " + runs().string() + extra;
  }

  static inline testing::TempDir* dir_ = nullptr;
  static inline std::filesystem::path store_, other_store_;
};

TEST_F(TrainedStoreCli, EvaluationAndDistillationRefuseAModelOfAnotherStore) {
  std::string output;
  EXPECT_NE(
      testing::run_command(evaluation(other_store_, " --models " + model().string()), &output), 0);
  EXPECT_NE(output.find("trained on another store than the one it is to be evaluated on"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("store.content (was"), std::string::npos) << output;

  EXPECT_NE(testing::run_command(
                std::string(HEADROOM_BINARY) +
                    " autoencoder --preset vgae,student --use-kd true"
                    " --teacher-path " +
                    model().string() + " --max-epochs 1 --threads 1 --progress false --store " +
                    other_store_.string() + " --runs-dir " + (dir_->path() / "kd").string(),
                &output),
            0);
  EXPECT_NE(output.find("to teach this student on"), std::string::npos) << output;
}

TEST_F(TrainedStoreCli, EvaluationJsonKeepsOnlyEntriesOfTheSameStoreAndDecisions) {
  std::string output;
  const auto summary_file = runs() / "store" / "evaluation" / "evaluation.json";
  const auto read_summary = [&] {
    std::ifstream in(summary_file);
    return nlohmann::json::parse(in);
  };
  ASSERT_EQ(testing::run_command(evaluation(store_, " --models " + model().string()), &output), 0)
      << output;
  auto summary = read_summary();
  ASSERT_TRUE(summary.contains("student_autoencoder")) << summary.dump(2);
  ASSERT_TRUE(summary.contains("baseline")) << summary.dump(2);
  EXPECT_EQ(summary["student_autoencoder"]["basis"]["label_free_windows"], 200);

  // Other decision settings: the earlier entries are measured against another rule and go.
  ASSERT_EQ(
      testing::run_command(
          evaluation(store_, " --no-baseline --label-free-windows 5 --models " + model().string()),
          &output),
      0)
      << output;
  summary = read_summary();
  EXPECT_FALSE(summary.contains("baseline")) << "--no-baseline drops its entry";
  EXPECT_EQ(summary["student_autoencoder"]["basis"]["label_free_windows"], 5);

  // Two different models under one name would share one entry: refused.
  std::filesystem::create_directories(dir_->path() / "copy");
  std::filesystem::copy(model(), dir_->path() / "copy" / "student_autoencoder",
                        std::filesystem::copy_options::recursive);
  EXPECT_NE(testing::run_command(
                evaluation(store_, " --models " + model().string() + "," +
                                       (dir_->path() / "copy" / "student_autoencoder").string()),
                &output),
            0);
  EXPECT_NE(output.find("two models named student_autoencoder"), std::string::npos) << output;
}

}  // namespace
}  // namespace headroom::train
