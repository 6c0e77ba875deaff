// --gradient-checkpointing auto: the planner turns checkpointing off when the step without it fits
// the budget at the largest batch the stage packs, and keeps it on when it does not; the stages
// train with the choice and record it.
#include "headroom/train/batches/checkpointing_choice.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/stages/autoencoder_stage.hpp"
#include "headroom/train/stages/classifier_stage.hpp"
#include "test_support.hpp"

namespace headroom::train {
namespace {

class CheckpointingChoiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The stages apply their budgets to the process (--memory-budget below leaves a tight one in
    // force): put back after each test, so that later tests in this process are not held to it.
    cpu_budget_before_ = memory::cpu_tensor_budget();
    // Fits measured here, in a fresh cache.
    ::setenv("HEADROOM_CACHE_DIR", (dir_.path() / "cache").c_str(), 1);
    store_path_ = testing::build_synthetic_store(dir_.path(), 20000);
    config_.stage = kNormalStage;
    config_.run.store = store_path_;
    config_.run.runs_dir = dir_.path() / "runs";
    config_.run.threads = 1;
    config_.run.progress = false;
    config_.model.family = "gat";
    config_.model.size = models::ModelSize::kStudent;
    config_.optimisation.batch_size = 64;
    config_.optimisation.max_epochs = 1;
  }
  void TearDown() override {
    memory::set_cpu_tensor_budget(cpu_budget_before_);
    ::unsetenv("HEADROOM_CACHE_DIR");
  }

  // The GAT's configuration for this store with checkpointing `on`, and its plain probed step.
  std::pair<ModelSpec, ProbeTarget> gat_step(const store::GraphStore& store, bool on) const {
    const auto& family = model_family("gat");
    ModelSpec model{"gat", family.resolve_config(config_.model, model_inputs(store))};
    model.config["gradient_checkpointing"] = on;
    ProbeTarget step;
    step.make = [&family, config = model.config] { return family.plain_subject(config); };
    return {model, step};
  }

  // What the run's best checkpoint says trained.
  static bool recorded_checkpointing(const std::filesystem::path& run_dir) {
    return read_checkpoint_info(run_dir / "best.pt")
        .model_config.at("gradient_checkpointing")
        .get<bool>();
  }

  std::string log_of(const std::filesystem::path& run_dir) const {
    std::ifstream in(run_dir / "log.txt");
    return {std::istreambuf_iterator<char>(in), {}};
  }

  testing::TempDir dir_;
  std::filesystem::path store_path_;
  TrainingConfig config_;
  std::int64_t cpu_budget_before_ = 0;
};

TEST_F(CheckpointingChoiceTest, OffWhenTheUncheckedLargestBatchFitsOnWhenItDoesNot) {
  const auto store = store::GraphStore::open(store_path_);
  auto context = resolve_run_context(config_, store, CommandWork::kTraining);
  context.device_budget = std::int64_t{4} << 30;
  const auto [unchecked, unchecked_step] = gat_step(store, false);
  const auto roomy =
      choose_gradient_checkpointing(config_, context, store, unchecked, unchecked_step);
  EXPECT_FALSE(roomy.on) << roomy.describe();
  EXPECT_EQ(roomy.batch_graphs, 64);
  EXPECT_GT(roomy.unchecked_peak_bytes, 0);
  EXPECT_NE(roomy.describe().find("off (auto)"), std::string::npos) << roomy.describe();

  // Checkpointing is what saves the memory the choice weighs: the checked step predicts less for
  // the same largest batch.
  const auto [checked, checked_step] = gat_step(store, true);
  const auto checked_fit = measure_step_peak(config_, context, store, checked, checked_step).fit;
  const auto checked_peak =
      checked_fit.predict(roomy.batch_nodes, roomy.batch_edges, roomy.batch_graphs);
  EXPECT_LT(checked_peak, roomy.unchecked_peak_bytes);

  // A budget whose packing share lies between the two: only the checked step packs that batch.
  const double between = (checked_peak + roomy.unchecked_peak_bytes) / 2;
  context.device_budget = static_cast<std::int64_t>(between / context.target_utilization);
  const auto tight =
      choose_gradient_checkpointing(config_, context, store, unchecked, unchecked_step);
  EXPECT_TRUE(tight.on) << tight.describe();
  EXPECT_TRUE(tight.fit_from_cache) << "the unchecked fit is measured once and cached";
  EXPECT_NEAR(tight.unchecked_peak_bytes, roomy.unchecked_peak_bytes,
              1e-6 * roomy.unchecked_peak_bytes);
  // What a teacher kept on the device takes comes out of the packing budget.
  const auto reserved =
      choose_gradient_checkpointing(config_, context, store, unchecked, unchecked_step, between);
  EXPECT_LT(reserved.packing_budget_bytes, tight.packing_budget_bytes);
}

// The stages apply the choice: the log says which and why, and the checkpoint's configuration
// records what trained.
TEST_F(CheckpointingChoiceTest, StagesTrainWithTheChoiceAndRecordIt) {
  const auto classifier = run_classifier_stage(config_);
  EXPECT_NE(log_of(classifier.run_dir).find("gradient checkpointing off (auto)"), std::string::npos)
      << log_of(classifier.run_dir);
  EXPECT_FALSE(recorded_checkpointing(classifier.run_dir));

  auto explicit_on = config_;
  explicit_on.model.gradient_checkpointing = Checkpointing::kOn;
  explicit_on.run.runs_dir = dir_.path() / "runs-on";
  const auto on = run_classifier_stage(explicit_on);
  EXPECT_EQ(log_of(on.run_dir).find("gradient checkpointing"), std::string::npos)
      << "an explicit setting is not chosen";
  EXPECT_TRUE(recorded_checkpointing(on.run_dir));

  auto autoencoder = config_;
  autoencoder.stage = kAutoencoderStage;
  autoencoder.model.family = "vgae";
  const auto vgae = run_autoencoder_stage(autoencoder);
  EXPECT_NE(log_of(vgae.run_dir).find("gradient checkpointing off (auto)"), std::string::npos)
      << log_of(vgae.run_dir);
  EXPECT_FALSE(recorded_checkpointing(vgae.run_dir));

  // Below what the unchecked step needs for its largest batch, auto keeps checkpointing on and
  // the budget holds every epoch.
  const auto store = store::GraphStore::open(store_path_);
  auto context = resolve_run_context(config_, store, CommandWork::kTraining);
  context.device_budget = std::int64_t{4} << 30;
  const auto [unchecked, unchecked_step] = gat_step(store, false);
  const auto [checked, checked_step] = gat_step(store, true);
  const auto roomy =
      choose_gradient_checkpointing(config_, context, store, unchecked, unchecked_step);
  const auto checked_peak =
      measure_step_peak(config_, context, store, checked, checked_step)
          .fit.predict(roomy.batch_nodes, roomy.batch_edges, roomy.batch_graphs);
  auto tight = config_;
  tight.run.runs_dir = dir_.path() / "runs-tight";
  tight.memory.budget = static_cast<std::int64_t>((checked_peak + roomy.unchecked_peak_bytes) / 2 /
                                                  context.target_utilization);
  const auto kept_on = run_classifier_stage(tight);
  EXPECT_NE(log_of(kept_on.run_dir).find("gradient checkpointing on (auto)"), std::string::npos)
      << log_of(kept_on.run_dir);
  EXPECT_TRUE(recorded_checkpointing(kept_on.run_dir));
  for (const auto& epoch : testing::read_metrics(kept_on.run_dir / "metrics.jsonl", "epoch")) {
    EXPECT_LE(epoch["utilization"].get<double>(), 1.0) << epoch.dump();
    EXPECT_EQ(epoch["oom_events"], 0);
  }
}

}  // namespace
}  // namespace headroom::train
