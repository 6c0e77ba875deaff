// The run context: what a command derives from its configuration (device, precision, threads,
// budgets) is resolved once, and what runs below it takes the context's numbers instead of
// deriving them again.
#include "headroom/train/context/run_context.hpp"

#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "headroom/train/batches/batch_sizing.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/stages/classifier_stage.hpp"
#include "test_support.hpp"

namespace headroom::train {
namespace {

constexpr std::int64_t kMiB = 1024 * 1024;

class RunContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // No peak fit from an earlier run: the probe runs here, in a fresh cache.
    ::setenv("HEADROOM_CACHE_DIR", (dir_.path() / "cache").c_str(), 1);
    store_path_ = testing::build_synthetic_store(dir_.path(), 20000);
    config_.stage = kNormalStage;
    config_.run.store = store_path_;
    config_.run.threads = 1;
    config_.model.family = "gat";
    config_.model.size = models::ModelSize::kStudent;
    config_.optimisation.batch_size = 64;
  }
  void TearDown() override { ::unsetenv("HEADROOM_CACHE_DIR"); }

  testing::TempDir dir_;
  std::filesystem::path store_path_;
  TrainingConfig config_;
};

TEST_F(RunContextTest, ResolvesWhatTheConfigurationNames) {
  config_.run.precision = "bf16-mixed";
  const auto store = store::GraphStore::open(store_path_);
  const auto context = resolve_run_context(config_, store, CommandWork::kTraining);
  EXPECT_TRUE(context.device.is_cpu());
  EXPECT_EQ(context.precision, Precision::kBf16Mixed);
  EXPECT_EQ(context.threads, 1);
  EXPECT_EQ(context.role.world_size, 1);
  // On CPU without --memory-budget, the tensors get what the host plan leaves for them.
  EXPECT_TRUE(context.host_plan.fits);
  EXPECT_EQ(context.device_budget, static_cast<std::int64_t>(context.host_plan.cpu_tensor_budget));
  EXPECT_DOUBLE_EQ(context.packing_budget_bytes(),
                   0.9 * static_cast<double>(context.device_budget));

  config_.memory.budget = 300 * kMiB;
  EXPECT_EQ(resolve_run_context(config_, store, CommandWork::kTraining).device_budget, 300 * kMiB);
}

TEST_F(RunContextTest, AbsentCudaIsRefusedNamingTheFlag) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "this machine has a CUDA device";
  config_.run.device = "cuda";
  try {
    resolve_run_context(config_);
    FAIL() << "resolved a CUDA device on a machine without one";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("--device cuda"), std::string::npos) << error.what();
  }
}

// Packing reads the context's budget: set to a number no resolution of this configuration gives,
// it is the one memory_plan.json records and the batches are packed to.
TEST_F(RunContextTest, BatchesArePackedToTheContextsBudget) {
  const auto store = store::GraphStore::open(store_path_);
  auto context = resolve_run_context(config_, store, CommandWork::kTraining);
  context.device_budget = 777 * kMiB;
  const auto& family = model_family("gat");
  const ModelSpec model{"gat", family.resolve_config(config_.model, model_inputs(store))};
  ProbeTarget step;
  step.make = [&] { return family.plain_subject(model.config); };
  RunDirectory run(dir_.path() / "run", /*echo=*/false);
  const auto sizing = plan_batch_sizing(config_, context, store, model, step, run);
  EXPECT_DOUBLE_EQ(sizing.packing_budget_bytes, 0.9 * 777.0 * kMiB);
  std::ifstream plan_file(run.path() / "memory_plan.json");
  ASSERT_TRUE(plan_file);
  const auto plan = nlohmann::json::parse(plan_file);
  EXPECT_DOUBLE_EQ(plan.at("memory_budget").get<double>(), 777.0 * kMiB);
  EXPECT_DOUBLE_EQ(plan.at("packing_budget_bytes").get<double>(), 0.9 * 777.0 * kMiB);
}

}  // namespace
}  // namespace headroom::train
