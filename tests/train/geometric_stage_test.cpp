// Stage `geometric` (train/stages/geometric_stage.hpp): SGMP trained on a geometric store on the
// task seam. Synthetic trees are classified better than their training split's majority class,
// QM9's HOMO-LUMO gap is regressed better than its training mean (both as evaluation.json writes
// them, each beside its baseline), a killed run resumes to the uninterrupted run's evaluation, and
// a store without positions is refused by name with nothing written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "headroom/graph_tables/import_qm9.hpp"
#include "headroom/synthetic/synthetic_trees.hpp"
#include "headroom/train/stages/geometric_stage.hpp"
#include "injected_kill.hpp"
#include "test_support.hpp"

namespace headroom::train {
namespace {

namespace fs = std::filesystem;

nlohmann::json read_json(const fs::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

// Two classes of 3-D trees, 20 to 40 nodes: 96 training (of which the store holds out a fifth
// for validation) and 32 test trees.
fs::path generate_trees(const testing::TempDir& dir) {
  synthetic::SyntheticTreeOptions options;
  options.seed = 11;
  options.trees = 160;
  options.min_nodes = 20;
  options.max_nodes = 40;
  options.test_fraction = 0.2;
  synthetic::generate_synthetic_trees(dir / "trees", options);
  return dir / "trees";
}

TrainingConfig small_geometric_stage(const testing::TempDir& dir, const fs::path& store) {
  TrainingConfig config;
  config.stage = kGeometricStage;
  config.run.store = store;
  config.run.runs_dir = dir / "runs";
  config.run.threads = 2;
  config.run.progress = false;
  config.run.seed = 3;
  config.model.hidden = 32;
  config.model.layers = 2;
  config.optimisation.batch_size = 16;
  config.optimisation.max_epochs = 8;
  config.optimisation.patience = 100;
  return config;
}

// Each split's metric beside its baseline, as evaluation.json holds them.
void expect_every_split_beats_its_baseline(const nlohmann::json& evaluation, const char* metric,
                                           bool higher_is_better) {
  for (const char* split : {"validation", "test"}) {
    const auto& entry = evaluation["splits"][split];
    ASSERT_TRUE(entry.contains(metric)) << split << ": " << evaluation.dump();
    const double model = entry[metric];
    const double baseline = entry["baseline"][metric];
    if (higher_is_better) {
      EXPECT_GT(model, baseline) << split << ": " << entry.dump();
    } else {
      EXPECT_LT(model, baseline) << split << ": " << entry.dump();
    }
  }
}

TEST(GeometricStage, TreesAreClassifiedBetterThanTheMajorityClassOnEverySplit) {
  testing::TempDir dir;
  const auto config = small_geometric_stage(dir, generate_trees(dir));
  const auto result = run_geometric_stage(config);
  const auto evaluation = read_json(result.run_dir / "evaluation.json");
  EXPECT_EQ(evaluation["task"], "graph classification");
  EXPECT_EQ(evaluation["splits"]["test"]["graphs"], 32);
  expect_every_split_beats_its_baseline(evaluation, "accuracy", /*higher_is_better=*/true);
  const auto log = testing::read_bytes(result.run_dir / "log.txt");
  EXPECT_NE(log.find("3rd-order paths per graph p50"), std::string::npos) << log;
  EXPECT_NE(log.find("not planned by path counts"), std::string::npos) << log;
}

TEST(GeometricStage, TheQm9GapIsRegressedBetterThanTheTrainingMean) {
  const auto molecules = testing::shared_data_dir() / "qm9" / "molecules.parquet";
  if (!fs::exists(molecules)) GTEST_SKIP() << molecules << " is absent: QM9 regression skipped";
  testing::TempDir dir;
  // The file's first 500 molecules: 410 training, 44 validation, 46 test.
  graph_tables::import_qm9(molecules, dir / "qm9", {.limit = 500});
  // One interaction at a higher rate: a few epochs on 410 molecules settle below the mean.
  auto config = small_geometric_stage(dir, dir / "qm9");
  config.run.seed = 42;
  config.model.layers = 1;
  config.optimisation.learning_rate = 3e-3;
  config.optimisation.batch_size = 8;
  config.optimisation.max_epochs = 8;
  const auto result = run_geometric_stage(config);
  const auto evaluation = read_json(result.run_dir / "evaluation.json");
  EXPECT_EQ(evaluation["task"], "graph regression");
  EXPECT_EQ(evaluation["splits"]["test"]["unit"], "hartree");
  expect_every_split_beats_its_baseline(evaluation, "mae", /*higher_is_better=*/false);
}

std::string geometric_command(const fs::path& store, const fs::path& runs) {
  return std::string(HEADROOM_BINARY) + " geometric --store " + store.string() + " --runs-dir " +
         runs.string() +
         " --max-epochs 4 --patience 100 --batch-size 16 --hidden 16 --layers 2 --seed 5"
         " --threads 1 --progress false";
}

// Killed by HEADROOM_INJECT_KILL after epoch 2, then rerun: it resumes after epoch 2 and ends
// where the uninterrupted run does, to the evaluation.
TEST(GeometricStage, AKilledRunResumesToTheUninterruptedEvaluation) {
  testing::TempDir dir;
  const auto store = generate_trees(dir);
  std::string output;
  ASSERT_EQ(testing::run_command(geometric_command(store, dir / "straight"), &output), 0) << output;

  const auto run_dir = dir / "resumed" / "trees" / "geometric_sgmp";
  const auto log = dir / "killed.log";
  ASSERT_EQ(testing::run_with_injected_kill(geometric_command(store, dir / "resumed"),
                                            "epoch-end:2", log),
            testing::killed_by_sigkill())
      << testing::read_bytes(log);
  EXPECT_FALSE(fs::exists(run_dir / "evaluation.json"));
  ASSERT_EQ(testing::run_command(geometric_command(store, dir / "resumed"), &output), 0) << output;

  const auto straight_dir = dir / "straight" / "trees" / "geometric_sgmp";
  const auto straight_result = read_json(straight_dir / "result.json");
  const auto resumed_result = read_json(run_dir / "result.json");
  EXPECT_EQ(resumed_result["training"]["resumed_after"], 2) << resumed_result.dump();
  for (const char* field : {"epochs", "best_epoch", "best_validation_loss", "best_metrics"})
    EXPECT_EQ(straight_result["training"][field], resumed_result["training"][field]) << field;
  const auto a = read_json(straight_dir / "evaluation.json");
  const auto b = read_json(run_dir / "evaluation.json");
  EXPECT_EQ(a["splits"], b["splits"]);
  EXPECT_EQ(a["checkpoint_epoch"], b["checkpoint_epoch"]);
}

TEST(GeometricStage, AStoreWithoutPositionsIsRefusedByNameWithNothingWritten) {
  testing::TempDir dir;
  const auto store = testing::build_synthetic_store(dir.path(), 4000);
  const auto config = small_geometric_stage(dir, store);
  const auto message = testing::error_message([&] { run_geometric_stage(config); });
  EXPECT_NE(message.find(store.string()), std::string::npos) << message;
  EXPECT_NE(message.find("no node positions"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(dir / "runs")) << "a run directory was left";
}

}  // namespace
}  // namespace headroom::train
