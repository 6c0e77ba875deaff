// The loop's extension points: the one TrainingStep with its gradient hook, metrics sinks, and
// the process role that decides who writes.
#include "headroom/train/step/training_step.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "gat_training_loss.hpp"
#include "headroom/loader/collate.hpp"
#include "headroom/models/gat_with_jk.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/loop/metrics_sink.hpp"
#include "headroom/train/stages/autoencoder_stage.hpp"
#include "headroom/train/stages/classifier_stage.hpp"
#include "headroom/util/process_role.hpp"
#include "test_support.hpp"

namespace headroom::train {
namespace {

class TrainingStepTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    store_path_ = new std::filesystem::path(testing::build_synthetic_store(dir_->path(), 20000, 3));
  }
  static void TearDownTestSuite() {
    delete store_path_;
    delete dir_;
  }
  static inline testing::TempDir* dir_ = nullptr;
  static inline std::filesystem::path* store_path_ = nullptr;
};

// How far one step moves each parameter of a fresh student GAT (same seed every call) on the
// first 32 training graphs: plain SGD without clipping, so an update is proportional to the
// gradient the step applies.
// The hook receives the parameters only (its batch weight is checked here: 32 graphs).
std::vector<at::Tensor> update_of_one_step(
    const store::GraphStore& store, const std::function<void(const std::vector<at::Tensor>&)>& hook,
    int* hook_calls) {
  torch::manual_seed(5);
  const auto num_ids = static_cast<std::int64_t>(store.metadata().vocabulary.size()) + 1;
  models::GATWithJK model(models::gat_preset(models::ModelSize::kStudent, num_ids));
  model->train();
  std::vector<at::Tensor> before;
  for (const auto& p : model->parameters()) before.push_back(p.detach().clone());
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1));
  StepSettings settings;
  settings.gradient_clip = 0;
  TrainingStep step(store, model->parameters(), optimizer, testing::gat_cross_entropy(model),
                    settings);
  if (hook)
    step.set_gradient_hook([&](const std::vector<at::Tensor>& parameters, double batch_weight) {
      ++*hook_calls;
      EXPECT_EQ(batch_weight, 32.0) << "a per-graph loss weighs a batch by its graphs";
      hook(parameters);
    });
  const auto ids = store.train_ids().first(32);
  step.run(loader::collate(store, ids, {}));
  std::vector<at::Tensor> update;
  std::size_t i = 0;
  for (const auto& p : model->parameters()) update.push_back(p.detach() - before[i++]);
  return update;
}

TEST_F(TrainingStepTest, GradientHookRunsAfterBackwardAndBeforeTheUpdate) {
  const auto store = store::GraphStore::open(*store_path_);
  int calls = 0;
  const auto plain = update_of_one_step(store, nullptr, &calls);
  EXPECT_EQ(calls, 0);

  // A hook that sees every gradient and doubles it: the step applies the doubled gradients.
  std::size_t seen = 0;
  const auto doubled = update_of_one_step(
      store,
      [&](const std::vector<at::Tensor>& parameters) {
        for (const auto& p : parameters) {
          if (!p.grad().defined()) continue;
          ++seen;
          p.mutable_grad().mul_(2.0);
        }
      },
      &calls);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen, plain.size()) << "every parameter has its gradient when the hook runs";
  double moved = 0;
  for (std::size_t i = 0; i < plain.size(); ++i) {
    moved += plain[i].abs().sum().item<double>();
    // atol: an update is read back as a difference of fp32 parameters (ulp up to ~5e-7).
    EXPECT_TRUE(torch::allclose(doubled[i], 2 * plain[i], 1e-4, 1e-6)) << i;
  }
  EXPECT_GT(moved, 0.0) << "the plain step moved the parameters";

  // A hook that zeroes the gradients: nothing moves.
  const auto zeroed = update_of_one_step(
      store,
      [](const std::vector<at::Tensor>& parameters) {
        for (const auto& p : parameters)
          if (p.grad().defined()) p.mutable_grad().zero_();
      },
      &calls);
  for (const auto& update : zeroed) EXPECT_EQ(update.abs().max().item<double>(), 0.0);
}

class RecordingSink final : public MetricsSink {
 public:
  void record(const nlohmann::json& line) override { lines.push_back(line); }
  void rewind(std::int64_t epochs) override { rewound_to = epochs; }
  std::vector<nlohmann::json> lines;
  std::int64_t rewound_to = -1;
};

TrainingConfig small_normal_stage(const std::filesystem::path& store,
                                  const std::filesystem::path& runs) {
  TrainingConfig config;
  config.stage = kNormalStage;
  config.run.store = store;
  config.run.runs_dir = runs;
  config.model.family = "gat";
  config.model.size = models::ModelSize::kStudent;
  config.optimisation.max_epochs = 2;
  config.optimisation.batch_size = 128;
  config.run.threads = 1;
  config.run.progress = false;
  config.memory.step_metrics_every = 1;
  return config;
}

TEST_F(TrainingStepTest, EveryMetricsLineReachesEverySink) {
  testing::TempDir runs;
  RecordingSink sink;
  LoopHooks hooks;
  hooks.metrics.push_back(&sink);
  const auto result = run_classifier_stage(small_normal_stage(*store_path_, runs.path()), hooks);
  ASSERT_EQ(result.outcome.epochs, 2);

  std::vector<nlohmann::json> file_lines;
  std::ifstream in(result.run_dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) file_lines.push_back(nlohmann::json::parse(line));
  ASSERT_GE(sink.lines.size(), 3U) << "two epoch lines and at least one step line";
  EXPECT_EQ(sink.lines, file_lines) << "the sink sees exactly what metrics.jsonl holds";
  EXPECT_EQ(sink.rewound_to, -1) << "a fresh run rewinds nothing";
}

// The normal stage prepared for the probes (prepared_stage.hpp) is the task drive_task runs, opened
// on its run directory: the trained family, every training graph, and a probe subject whose loss
// is the stage's cross-entropy on a real batch.
TEST_F(TrainingStepTest, ThePreparedNormalStageIsTheTaskOpenedOnItsRunDirectory) {
  testing::TempDir runs;
  const auto config = small_normal_stage(*store_path_, runs.path());
  const auto prepared = prepare_classifier_stage(config);
  EXPECT_EQ(prepared->model().family, "gat");
  const auto store = store::GraphStore::open(*store_path_);
  EXPECT_EQ(prepared->training_ids().size(), store.train_ids().size());
  std::ifstream log(run_directory(config) / "log.txt");
  std::stringstream text;
  text << log.rdbuf();
  EXPECT_NE(text.str().find("stage normal: student gat on"), std::string::npos) << text.str();
  const auto target = prepared->probe_target();
  EXPECT_EQ(target.objective, "plain");
  auto subject = target.make();
  const std::vector<std::uint32_t> ids(store.train_ids().begin(), store.train_ids().begin() + 8);
  const auto loss = subject.loss(loader::collate(store, ids, {})).item<double>();
  EXPECT_TRUE(std::isfinite(loss) && loss > 0) << loss;
}

// The autoencoder stage prepared for the probes is its task, as drive_task runs it, opened on its
// run directory too: the trained family, the normal training graphs (the probes' population), and
// a probe subject whose loss is the family's, averaged per node, on a real batch.
TEST_F(TrainingStepTest, ThePreparedAutoencoderStageIsTheTaskOpenedOnItsRunDirectory) {
  testing::TempDir runs;
  auto config = small_normal_stage(*store_path_, runs.path());
  config.stage = kAutoencoderStage;
  config.model.family = "vgae";
  const auto prepared = prepare_autoencoder_stage(config);
  EXPECT_EQ(prepared->model().family, "vgae");
  const auto store = store::GraphStore::open(*store_path_);
  const auto labels = store.size_index().label;
  const auto normals = std::count_if(store.train_ids().begin(), store.train_ids().end(),
                                     [&](std::uint32_t id) { return labels[id] == 0; });
  const auto ids = prepared->training_ids();
  EXPECT_EQ(static_cast<std::ptrdiff_t>(ids.size()), normals);
  EXPECT_TRUE(
      std::all_of(ids.begin(), ids.end(), [&](std::uint32_t id) { return labels[id] == 0; }));
  std::ifstream log(run_directory(config) / "log.txt");
  std::stringstream text;
  text << log.rdbuf();
  EXPECT_NE(text.str().find("stage autoencoder: student vgae on"), std::string::npos) << text.str();
  const auto target = prepared->probe_target();
  EXPECT_EQ(target.objective, "plain");
  EXPECT_EQ(target.population, ids);
  auto subject = target.make();
  EXPECT_EQ(subject.loss_reduction, LossReduction::kPerNode);
  ASSERT_GE(ids.size(), 8U);
  const std::vector<std::uint32_t> batch(ids.begin(), ids.begin() + 8);
  const auto loss = subject.loss(loader::collate(store, batch, {})).item<double>();
  EXPECT_TRUE(std::isfinite(loss) && loss > 0) << loss;
}

TEST_F(TrainingStepTest, OnlyTheWritingProcessTouchesTheFileSystem) {
  testing::TempDir runs;
  util::set_process_role({1, 2});  // rank 1 of 2: not the writer
  RecordingSink sink;
  LoopHooks hooks;
  hooks.metrics.push_back(&sink);
  StageResult result;
  try {
    auto config = small_normal_stage(*store_path_, runs.path());
    // Calibration reads back the best.pt rank 0 wrote; alone here, this rank has none.
    config.evaluation.calibration = "none";
    result = run_classifier_stage(config, hooks);
  } catch (...) {
    util::set_process_role({});
    throw;
  }
  util::set_process_role({});
  EXPECT_EQ(result.outcome.epochs, 2) << "it still trains";
  EXPECT_TRUE(sink.lines.empty()) << "no metrics from a non-writing process";
  EXPECT_FALSE(std::filesystem::exists(runs / "store")) << "no run directory, checkpoint or log";

  EXPECT_THROW(util::set_process_role({2, 2}), std::invalid_argument);
  EXPECT_TRUE(util::process_role().writes());
}

}  // namespace
}  // namespace headroom::train
