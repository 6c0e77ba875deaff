// The node task through the shared loop: TextGCN's model learns a corpus whose classes have their
// own words, evaluates every split, never builds the N × N identity, and a killed run resumes to
// the uninterrupted run's result from the epoch it was killed after.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fmt/format.h>

#include <fstream>
#include <numeric>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/models/node_gcn.hpp"
#include "headroom/nn/sparse_adjacency.hpp"
#include "headroom/text/text_graph_builder.hpp"
#include "headroom/train/stages/node_classifier_stage.hpp"
#include "injected_kill.hpp"
#include "node_step_peaks.hpp"
#include "separable_corpus.hpp"
#include "test_support.hpp"

namespace headroom::train {
namespace {

std::filesystem::path build_store(const testing::TempDir& dir) {
  return testing::build_separable_store(dir.path(), 3, 40);
}

// Stage node on the separable corpus's store with the node task's defaults for `model` (gcn or
// gat), 40 epochs at most.
TrainingConfig small_node_stage(const testing::TempDir& dir, const std::string& model) {
  TrainingConfig config;
  config.model.family = model;
  apply_node_task_defaults(config, {.preset = true});
  config.run.store = build_store(dir);
  config.run.runs_dir = dir / "runs";
  config.run.threads = 2;
  config.run.progress = false;
  config.optimisation.max_epochs = 40;
  return config;
}

nlohmann::json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

TEST(NodeClassification, LearnsASeparableCorpusAndEvaluatesEverySplit) {
  testing::TempDir dir;
  const auto result = run_node_classifier_stage(small_node_stage(dir, "gcn"));

  ASSERT_TRUE(result.evaluation.contains("test"));
  const auto& test = result.evaluation.at("test");
  EXPECT_EQ(test.count, 30U);  // every fourth of 120 documents
  EXPECT_GE(test.accuracy, 0.9);
  EXPECT_GE(test.macro_f1, 0.9);
  EXPECT_TRUE(result.evaluation.contains("train"));
  EXPECT_TRUE(result.evaluation.contains("validation"));

  const auto run_dir = dir / "runs" / "store" / "node_gcn";
  EXPECT_EQ(result.training.run_dir, run_dir);
  const auto evaluation = read_json(run_dir / "evaluation.json");
  EXPECT_DOUBLE_EQ(evaluation["splits"]["test"]["accuracy"].get<double>(), test.accuracy);
  EXPECT_DOUBLE_EQ(evaluation["splits"]["test"]["macro_f1"].get<double>(), test.macro_f1);
  // The loop's epoch lines count the node task's unit: training nodes, one full batch each.
  const auto epochs = testing::read_metrics(run_dir / "metrics.jsonl", "epoch");
  ASSERT_FALSE(epochs.empty());
  EXPECT_EQ(epochs.front()["nodes"].get<std::int64_t>(),
            static_cast<std::int64_t>(result.evaluation.at("train").count));
  EXPECT_EQ(epochs.front()["steps"].get<std::int64_t>(), 1);
  EXPECT_EQ(epochs.front()["plan"]["mode"], "full-batch");
  EXPECT_LT(epochs.back()["train_loss"].get<double>(), epochs.front()["train_loss"].get<double>());
}

TEST(NodeClassification, AGatLearnsASeparableCorpus) {
  testing::TempDir dir;
  const auto result = run_node_classifier_stage(small_node_stage(dir, "gat"));

  const auto& test = result.evaluation.at("test");
  EXPECT_GE(test.accuracy, 0.9);
  EXPECT_GE(test.macro_f1, 0.9);
  const auto run_dir = dir / "runs" / "store" / "node_gat";
  EXPECT_EQ(result.training.run_dir, run_dir);
  const auto evaluation = read_json(run_dir / "evaluation.json");
  EXPECT_EQ(evaluation["model"], "node_gat");
  EXPECT_EQ(evaluation["training"]["mode"], "full-batch");
}

TEST(NodeClassification, TheIdentityInputIsNeverBuilt) {
  // N = 4000 nodes on a ring: an N × N float identity would be 64 MB, while W1 is N × 4 floats.
  constexpr std::int64_t n = 4000;
  std::vector<std::int64_t> offsets = {0};
  std::vector<std::int32_t> columns;
  for (std::int64_t i = 0; i < n; ++i) {
    for (const auto j : {(i + n - 1) % n, i, (i + 1) % n}) columns.push_back(static_cast<int>(j));
    offsets.push_back(static_cast<std::int64_t>(columns.size()));
  }
  nn::SparseAdjacency adjacency(torch::tensor(offsets, torch::kInt64),
                                torch::tensor(columns, torch::kInt32),
                                torch::full({static_cast<std::int64_t>(columns.size())}, 1.0F / 3),
                                /*symmetric=*/true);
  memory::install_counting_cpu_allocator();
  const auto before = memory::memory_snapshot().cpu.current_bytes;
  memory::reset_peak();
  models::NodeGcn model(models::NodeModelConfig{.num_nodes = n, .hidden = 4, .num_classes = 2});
  const auto labels = torch::randint(0, 2, {n}, torch::kInt64);
  torch::nn::functional::cross_entropy(model->forward(adjacency), labels).backward();
  const auto peak = memory::memory_snapshot().cpu.peak_bytes - before;
  EXPECT_GT(peak, n * 4 * 4);       // W1 at least was counted
  EXPECT_LT(peak, n * n * 4 / 16);  // far below one identity matrix
  EXPECT_EQ(model->identity_weight.sizes(), (std::vector<std::int64_t>{n, 4}));
}

std::string run_command(const std::filesystem::path& corpus, const std::filesystem::path& runs,
                        const std::filesystem::path& store, const std::string& extra = "") {
  return std::string(HEADROOM_BINARY) + " run " + corpus.string() + " --store " + store.string() +
         " --runs-dir " + runs.string() +
         " --max-epochs 150 --patience 500 --threads 1 --val-fraction 0.2 --progress false" + extra;
}

// Runs `command` straight, then again killed by HEADROOM_INJECT_KILL=`kill_point` and resumed:
// the resumed run must say it resumed after `resumed_after` epochs (result.json), and its best
// epoch, best loss and evaluation must be the straight run's, exactly. A rerun that silently
// trained from scratch would match on the evaluation alone; resumed_after is what tells them apart
// (mutation seen to fail: resumable_training() returning false).
void expect_resumed_run_equals_straight_one(const testing::TempDir& dir, const std::string& extra,
                                            const std::string& model = "node_gcn",
                                            const std::string& kill_point = "epoch-end:3",
                                            std::int64_t resumed_after = 3) {
  std::string output;
  ASSERT_EQ(testing::run_command(run_command(dir / "corpus", dir / "straight", dir / "s1", extra),
                                 &output),
            0)
      << output;
  EXPECT_NE(output.find("test accuracy"), std::string::npos) << output;

  const auto run_dir = dir / "resumed" / "s2" / model;
  const auto log = dir / "killed.log";
  ASSERT_EQ(testing::run_with_injected_kill(
                run_command(dir / "corpus", dir / "resumed", dir / "s2", extra), kill_point, log),
            testing::killed_by_sigkill())
      << testing::read_bytes(log);
  EXPECT_FALSE(std::filesystem::exists(run_dir / "evaluation.json"));
  EXPECT_FALSE(std::filesystem::exists(run_dir / "result.json"));
  ASSERT_EQ(testing::run_command(run_command(dir / "corpus", dir / "resumed", dir / "s2", extra),
                                 &output),
            0)
      << output;
  EXPECT_NE(output.find(fmt::format("after epoch {}\n", resumed_after)), std::string::npos)
      << output;
  EXPECT_TRUE(testing::temporaries_of(run_dir / "last.pt").empty())
      << "a killed write's temporary was left behind";

  const auto straight_result = read_json(dir / "straight" / "s1" / model / "result.json");
  const auto resumed_result = read_json(run_dir / "result.json");
  EXPECT_EQ(resumed_result["training"]["resumed_after"], resumed_after) << resumed_result.dump();
  for (const char* field : {"epochs", "best_epoch", "best_validation_loss", "best_metrics"})
    EXPECT_EQ(straight_result["training"][field], resumed_result["training"][field]) << field;
  const auto a = read_json(dir / "straight" / "s1" / model / "evaluation.json");
  const auto b = read_json(run_dir / "evaluation.json");
  EXPECT_EQ(a["splits"], b["splits"]);
  EXPECT_EQ(a["checkpoint_epoch"], b["checkpoint_epoch"]);
  EXPECT_EQ(a["training"]["mode"], b["training"]["mode"]);
}

TEST(NodeClassification, AKilledRunResumesToTheUninterruptedResult) {
  testing::TempDir dir;
  testing::write_separable_corpus(dir / "corpus", 3, 40);
  expect_resumed_run_equals_straight_one(dir, "");
}

// Killed while epoch 2's last.pt was being written (half of it in a temporary, not renamed): the
// rerun removes the temporary and resumes after epoch 1, whose last.pt is whole.
TEST(NodeClassification, AKillWhileLastPtIsWrittenResumesFromTheEpochBefore) {
  testing::TempDir dir;
  testing::write_separable_corpus(dir / "corpus", 3, 40);
  expect_resumed_run_equals_straight_one(dir, "", "node_gcn", "checkpoint-write:2", 1);
}

// The same with sampled steps: the epochs' parts are drawn from the seed and the epoch, so the
// resumed run trains on the parts the straight one did.
TEST(NodeClassification, AKilledSampledRunResumesToTheUninterruptedResult) {
  testing::TempDir dir;
  testing::write_separable_corpus(dir / "corpus", 3, 40);
  // A budget between the smallest sampled step and the full batch, measured on the same graph.
  const auto store =
      store::NodeGraphStore::open(testing::build_separable_store(dir.path() / "probe", 3, 40));
  const models::NodeModelConfig model{
      .num_nodes = static_cast<std::int64_t>(store.num_nodes()), .hidden = 2048, .num_classes = 3};
  const auto peaks = testing::measure_node_step_peaks(store, model);
  ASSERT_LT(peaks.floor, peaks.whole);
  const auto budget = peaks.budget_between(0.4);
  expect_resumed_run_equals_straight_one(
      dir, " --hidden 2048 --memory-budget " + std::to_string(budget));
  const auto evaluation = read_json(dir / "straight" / "s1" / "node_gcn" / "evaluation.json");
  EXPECT_EQ(evaluation["training"]["mode"], "sampled");
}

TEST(NodeClassification, AKilledGatRunResumesToTheUninterruptedResult) {
  testing::TempDir dir;
  testing::write_separable_corpus(dir / "corpus", 3, 40);
  expect_resumed_run_equals_straight_one(dir, " --node-model gat", "node_gat");
}

}  // namespace
}  // namespace headroom::train
