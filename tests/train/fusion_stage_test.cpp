// Stage fusion through the command line: it fits on the validation split of a store whose
// classifier and VGAE are trained, resumes after a kill exactly where an uninterrupted run would
// be, and is evaluated like any model.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "headroom/train/config/training_config.hpp"
#include "headroom/train/fusion/fusion_stage.hpp"
#include "injected_kill.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

nlohmann::json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

class FusionStage : public ::testing::Test {
 protected:
  // One store and one trained classifier and VGAE (small students, two epochs) for every test.
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    store_ = testing::build_synthetic_store(dir_->path(), 30000);
    const auto models = dir_->path() / "models";
    const std::string common = " --store " + store_.string() + " --runs-dir " + models.string() +
                               " --max-epochs 2 --batch-size 64 --threads 2 --progress false";
    ASSERT_EQ(testing::run_command(std::string(HEADROOM_BINARY) +
                                   " autoencoder --preset vgae,student --vgae-hidden 32,16"
                                   " --latent 8" +
                                   common),
              0);
    ASSERT_EQ(testing::run_command(std::string(HEADROOM_BINARY) + " normal --preset gat,student" +
                                   common),
              0);
    classifier_ = models / "store" / "student_normal";
    autoencoder_ = models / "store" / "student_autoencoder";
  }
  static void TearDownTestSuite() { delete dir_; }

  static std::string fusion(const std::filesystem::path& runs, const std::string& method,
                            int epochs = 40) {
    return std::string(HEADROOM_BINARY) + " fusion --store " + store_.string() + " --runs-dir " +
           runs.string() + " --fusion-method " + method + " --fusion-classifier " +
           classifier_.string() + " --fusion-autoencoder " + autoencoder_.string() +
           " --fusion-epochs " + std::to_string(epochs) + " --patience " + std::to_string(epochs) +
           " --threads 1 --progress false";
  }

  static inline testing::TempDir* dir_ = nullptr;
  static inline std::filesystem::path store_, classifier_, autoencoder_;
};

TEST_F(FusionStage, KilledRunEndsLikeAnUninterruptedOneAndIsEvaluated) {
  const auto straight = dir_->path() / "straight";
  const auto resumed = dir_->path() / "resumed";
  std::string output;
  // Killed by the run itself (HEADROOM_INJECT_KILL) once the third epoch is durable, so the
  // rerun must resume after exactly that epoch; a rerun that trained from scratch would end with
  // the same metrics, and only resumed_after tells them apart (mutation seen to fail:
  // resumable_training() returning false).
  constexpr int kEpochs = 300;
  ASSERT_EQ(testing::run_command(fusion(straight, "dqn", kEpochs), &output), 0) << output;

  const auto run_dir = resumed / "store" / "fusion_dqn_student_normal+student_autoencoder";
  const auto log = dir_->path() / "killed-fusion.log";
  ASSERT_EQ(testing::run_with_injected_kill(fusion(resumed, "dqn", kEpochs), "epoch-end:3", log),
            testing::killed_by_sigkill())
      << testing::read_bytes(log);
  EXPECT_EQ(testing::read_metrics(run_dir / "metrics.jsonl").size(), 3U);
  EXPECT_FALSE(std::filesystem::exists(run_dir / "result.json"));
  ASSERT_EQ(testing::run_command(fusion(resumed, "dqn", kEpochs), &output), 0) << output;
  EXPECT_NE(output.find("resuming"), std::string::npos) << output;

  const auto a = testing::read_metrics(
      straight / "store" / "fusion_dqn_student_normal+student_autoencoder" / "metrics.jsonl");
  const auto b = testing::read_metrics(run_dir / "metrics.jsonl");
  ASSERT_EQ(a.size(), static_cast<std::size_t>(kEpochs));
  ASSERT_EQ(b.size(), static_cast<std::size_t>(kEpochs));
  for (std::size_t e = 0; e < a.size(); ++e) {
    EXPECT_EQ(b[e]["epoch"], e);
    EXPECT_DOUBLE_EQ(a[e]["train_loss"].get<double>(), b[e]["train_loss"].get<double>()) << e;
    EXPECT_DOUBLE_EQ(a[e]["validation_loss"].get<double>(), b[e]["validation_loss"].get<double>());
    // The DQN reports how much it trusts the classifier.
    const double weight = b[e]["validation"]["mean_classifier_weight"].get<double>();
    EXPECT_GE(weight, 0.0);
    EXPECT_LE(weight, 1.0);
  }
  const auto result = read_json(run_dir / "result.json");
  EXPECT_EQ(result["training"]["epochs"], kEpochs);
  EXPECT_EQ(result["training"]["resumed_after"], 3);

  // Evaluated like any model: the fused score as log-odds, decided at 0 (P 0.5) and at the
  // calibrated threshold.
  ASSERT_EQ(testing::run_command(std::string(HEADROOM_BINARY) + " evaluation --store " +
                                     store_.string() + " --runs-dir " + resumed.string() +
                                     " --threads 2 --progress false --models " + run_dir.string(),
                                 &output),
            0)
      << output;
  const auto evaluation = read_json(resumed / "store" / "evaluation" /
                                    "fusion_dqn_student_normal+student_autoencoder.json");
  EXPECT_EQ(evaluation["score"], "fused attack log-odds");
  EXPECT_EQ(evaluation["decision_threshold"], 0.0);
  EXPECT_TRUE(evaluation.contains("calibrated_threshold"));
  bool saw_test_split = false;
  for (const auto& group : evaluation["groups"]) {
    // A group without attack labels (the attack-free validation windows) has no F1 (null).
    if (group["metrics"]["positives"] == 0) {
      EXPECT_TRUE(group["metrics"]["f1"].is_null()) << group.dump();
      continue;
    }
    const double f1 = group["metrics"]["f1"].get<double>();
    EXPECT_GE(f1, 0.0);
    EXPECT_LE(f1, 1.0);
    saw_test_split |= group["split"].get<std::string>().rfind("test_", 0) == 0;
  }
  EXPECT_TRUE(saw_test_split);

  // A finished run is not retrained.
  ASSERT_EQ(testing::run_command(fusion(resumed, "dqn", kEpochs), &output), 0) << output;
  EXPECT_NE(output.find("already complete"), std::string::npos) << output;
}

// `run --max-epochs 1` trained fusion with the GNN stages' epoch count in its configuration, and
// `headroom fusion` (which has no --max-epochs) then refused that fusion as "another run
// (max_epochs was 1, now 50)". Fusion's configuration holds only what fusion reads: a fusion
// trained under any --max-epochs is the same fusion. (Mutation seen to fail: run_fusion_stage
// passing the caller's configuration unchanged.)
TEST_F(FusionStage, TheGraphStagesEpochCountIsNoPartOfAFusion) {
  train::TrainingConfig config;
  config.stage = train::kFusionStage;
  config.run.store = store_;
  config.run.runs_dir = dir_->path() / "epochs";
  config.run.threads = 1;
  config.run.progress = false;
  config.fusion.method = "logistic";
  config.fusion.classifier_path = classifier_;
  config.fusion.autoencoder_path = autoencoder_;
  config.fusion.max_epochs = 5;
  config.optimisation.max_epochs = 1;  // as `run --max-epochs 1` passes it
  const auto first = train::run_fusion_stage(config);
  EXPECT_FALSE(first.outcome.already_complete);
  config.optimisation.max_epochs = 50;  // as `headroom fusion` passes it
  config.optimisation.batch_size = 64;
  const auto again = train::run_fusion_stage(config);
  EXPECT_TRUE(again.outcome.already_complete);
  EXPECT_EQ(again.run_dir, first.run_dir);
}

TEST_F(FusionStage, LogisticFusionTrainsAndBeatsChanceOnHeldOutGraphs) {
  const auto runs = dir_->path() / "logistic";
  std::string output;
  ASSERT_EQ(testing::run_command(fusion(runs, "logistic"), &output), 0) << output;
  const auto result = read_json(
      runs / "store" / "fusion_logistic_student_normal+student_autoencoder" / "result.json");
  EXPECT_EQ(result["training"]["epochs"], 40);
  EXPECT_GT(result["training"]["best_metrics"]["roc_auc"].get<double>(), 0.5);
  EXPECT_FALSE(result["training"]["best_metrics"].contains("mean_classifier_weight"));
}

// Evaluation and fusion's scoring run models on the device like training does, so they keep to
// --memory-budget as training does: each model's peak is recorded and stays within it, a batch
// that does not fit is scored in parts, and the results are those of the unbudgeted run.
TEST_F(FusionStage, EvaluationAndFusionScoringKeepToTheMemoryBudget) {
  const auto models = classifier_.string() + "," + autoencoder_.string();
  const auto evaluate = [&](const std::string& name, const std::string& budget) {
    const auto runs = dir_->path() / name;
    std::string output;
    EXPECT_EQ(testing::run_command(std::string(HEADROOM_BINARY) + " evaluation --store " +
                                       store_.string() + " --runs-dir " + runs.string() +
                                       " --threads 1 --progress false --eval-batch-size 4096" +
                                       " --models " + models + budget,
                                   &output),
              0)
        << output;
    return read_json(runs / "store" / "evaluation" / "evaluation.json");
  };
  const auto free = evaluate("evaluation-free", "");
  std::int64_t free_peak = 0;
  for (const auto& [name, entry] : free.items())
    free_peak = std::max(free_peak, entry["memory"]["peak_tensor_bytes"].get<std::int64_t>());
  ASSERT_GT(free_peak, 0) << free.dump(2);
  const std::int64_t budget = free_peak / 2;
  const auto budgeted = evaluate("evaluation-budget", " --memory-budget " + std::to_string(budget));
  ASSERT_EQ(budgeted.size(), 3U) << budgeted.dump(2);  // the two models and the baseline
  for (const auto& [name, entry] : budgeted.items()) {
    EXPECT_EQ(entry["memory"]["memory_budget"], budget) << name;
    EXPECT_LE(entry["memory"]["peak_tensor_bytes"].get<std::int64_t>(), budget) << name;
    const auto& groups = entry["groups"];
    const auto& reference = free[name]["groups"];
    ASSERT_EQ(groups.size(), reference.size()) << name;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      EXPECT_EQ(groups[g]["metrics"]["count"], reference[g]["metrics"]["count"]) << name;
      const auto& auc = groups[g]["metrics"]["roc_auc"];
      if (auc.is_number()) {
        EXPECT_NEAR(auc.get<double>(), reference[g]["metrics"]["roc_auc"].get<double>(), 1e-4)
            << name << " group " << g;
      }
    }
  }

  // Fusion scores the validation split with both models inside the same budget, as its own
  // memory phase, and fits to what it fits without one.
  const auto fuse = [&](const std::string& name, const std::string& extra) {
    const auto runs = dir_->path() / name;
    std::string output;
    EXPECT_EQ(testing::run_command(fusion(runs, "logistic") + extra + " 2>&1", &output), 0)
        << output;
    return std::make_pair(
        output, read_json(runs / "store" / "fusion_logistic_student_normal+student_autoencoder" /
                          "result.json"));
  };
  const auto [free_log, free_result] = fuse("fusion-free", "");
  const auto [log, result] = fuse("fusion-budget", " --memory-budget " + std::to_string(budget));
  const auto line = log.find("scoring on cpu: tensor peak");
  ASSERT_NE(line, std::string::npos) << log;
  const auto share = log.find("% of the memory budget", line);
  ASSERT_NE(share, std::string::npos) << log;
  const auto open = log.rfind('(', share);
  EXPECT_LE(std::stod(log.substr(open + 1, share - open - 1)), 100.0) << log.substr(line, 120);
  EXPECT_EQ(result["training"]["best_metrics"], free_result["training"]["best_metrics"]);
}

// An evaluation scores the two models a fusion reads once for every fusion that reads them: the
// second fusion's phase runs neither model (a far lower tensor peak), and its scores are those of
// an evaluation of it alone.
TEST_F(FusionStage, EvaluationScoresTheFusedModelsOnceForEveryFusion) {
  const auto runs = dir_->path() / "two-fusions";
  std::string output;
  ASSERT_EQ(testing::run_command(fusion(runs, "logistic", 10), &output), 0) << output;
  ASSERT_EQ(testing::run_command(fusion(runs, "dqn", 10), &output), 0) << output;
  const auto dir = runs / "store";
  const std::string dqn = "fusion_dqn_student_normal+student_autoencoder";
  const std::string logistic = "fusion_logistic_student_normal+student_autoencoder";
  const auto evaluate = [&](const std::string& name, const std::string& models) {
    const auto out = dir_->path() / name;
    EXPECT_EQ(
        testing::run_command(std::string(HEADROOM_BINARY) + " evaluation --store " +
                                 store_.string() + " --runs-dir " + out.string() +
                                 " --threads 1 --progress false --no-baseline --models " + models,
                             &output),
        0)
        << output;
    return out / "store" / "evaluation";
  };
  const auto both =
      evaluate("evaluate-both", (dir / dqn).string() + "," + (dir / logistic).string());
  const auto alone = evaluate("evaluate-alone", (dir / logistic).string());
  const auto summary = read_json(both / "evaluation.json");
  const auto peak = [&](const std::string& model) {
    return summary.at(model).at("memory").at("peak_tensor_bytes").get<std::int64_t>();
  };
  EXPECT_LT(peak(logistic) * 4, peak(dqn)) << summary.dump(2);
  const auto read_text = [](const std::filesystem::path& file) {
    std::ifstream in(file);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const auto scores = read_text(both / "scores" / (logistic + ".csv"));
  EXPECT_FALSE(scores.empty());
  EXPECT_EQ(scores, read_text(alone / "scores" / (logistic + ".csv")));
}

// A hybrid fusion (--fusion-with-baseline) fits on the two models' signals and the classical
// baseline's window score, runs in its own directory, and is evaluated as a hybrid: its per-file
// label-free decisions, like the baseline's, are set on the adaptation windows the baseline did not
// learn. The DQN, whose fused score mixes the two models' scores alone, refuses it.
TEST_F(FusionStage, HybridFusionReadsTheBaselineAndIsEvaluatedAsAHybrid) {
  const auto runs = dir_->path() / "hybrid";
  std::string output;
  EXPECT_NE(testing::run_command(fusion(runs, "dqn") + " --fusion-with-baseline 2>&1", &output), 0);
  EXPECT_NE(output.find("--fusion-with-baseline needs --fusion-method logistic"), std::string::npos)
      << output;

  ASSERT_EQ(
      testing::run_command(fusion(runs, "logistic") + " --fusion-with-baseline 2>&1", &output), 0)
      << output;
  EXPECT_NE(output.find("hybrid: with the classical baseline's window score"), std::string::npos)
      << output;
  const auto run_dir = runs / "store" / "hybrid_logistic_student_normal+student_autoencoder";
  EXPECT_EQ(read_json(run_dir / "config.json")["config"]["fusion_with_baseline"], true);
  EXPECT_GT(read_json(run_dir / "result.json")["training"]["best_metrics"]["roc_auc"].get<double>(),
            0.5);

  ASSERT_EQ(testing::run_command(std::string(HEADROOM_BINARY) + " evaluation --store " +
                                     store_.string() + " --runs-dir " + runs.string() +
                                     " --threads 2 --progress false --label-free-windows 10" +
                                     " --models " + run_dir.string(),
                                 &output),
            0)
      << output;
  const auto evaluation = read_json(runs / "store" / "evaluation" / "evaluation.json");
  const auto& hybrid = evaluation.at("hybrid_logistic_student_normal+student_autoencoder");
  EXPECT_EQ(hybrid["hybrid"], true);
  EXPECT_EQ(hybrid["score"], "fused attack log-odds of the two models and the classical baseline");
  EXPECT_EQ(hybrid["decision_threshold"], 0.0);
  EXPECT_FALSE(hybrid["label_free_thresholds"].empty()) << hybrid.dump(2);
  // The baseline is still a row of its own, computed once for both.
  EXPECT_EQ(evaluation.at("baseline").value("hybrid", false), false);
  EXPECT_EQ(output.find("learnt the inter-arrival times"),
            output.rfind("learnt the inter-arrival times"))
      << output;
}

TEST_F(FusionStage, MissingModelNamesTheFlag) {
  std::string output;
  EXPECT_NE(testing::run_command(std::string(HEADROOM_BINARY) + " fusion --store " +
                                     store_.string() + " --runs-dir " +
                                     (dir_->path() / "empty").string() + " --progress false 2>&1",
                                 &output),
            0);
  EXPECT_NE(output.find("--fusion-classifier"), std::string::npos) << output;
  EXPECT_FALSE(std::filesystem::exists(dir_->path() / "empty" / "store"))
      << "a fusion that cannot start leaves no run directory";
}

}  // namespace
}  // namespace headroom
