// Training against what an adversarial user found it trusting (issue 45, items 5, 6, 9 and 10), on
// the real binary: a last.pt copied in from another run, a store without validation graphs, a
// model larger than the memory budget, damaged run files, and runs that diverge.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "headroom/store/graph_dataset_writer.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::run_command;
using testing::TempDir;
using testing::write_text_file;

std::string headroom(const std::string& args) {
  return fmt::format("timeout 300 '{}' {} 2>&1", HEADROOM_BINARY, args);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A graph store written the way import-graphs and the Python writer write one: `graphs` rings of
// four nodes, every other one an attack, the node identities cycling through `classes`, and the
// two features after the identity equal to `value`.
void write_graph_store(const fs::path& path, std::uint32_t classes, float value,
                       double validation_fraction) {
  store::GraphDatasetOptions options;
  options.node_features = 3;
  options.identity_classes = classes;
  options.validation_fraction = validation_fraction;
  options.seed = 1;
  options.created_by = "hostile_training_test";
  store::GraphDatasetWriter writer(path, options);
  const std::vector<std::int64_t> edges = {0, 1, 1, 2, 2, 3, 3, 0};
  for (int g = 0; g < 80; ++g) {
    std::vector<float> features;
    for (int node = 0; node < 4; ++node)
      for (const float feature : {static_cast<float>((g + node) % classes), value, value})
        features.push_back(feature);
    store::DatasetGraph graph;
    graph.node_features = features;
    graph.edges = edges;
    graph.label = static_cast<std::uint8_t>(g % 2);
    graph.split = g < 64 ? store::DatasetSplit::kTrain : store::DatasetSplit::kTest;
    writer.append(graph);
  }
  writer.commit();
}

// A small synthetic dataset and its store; the stages train a few small epochs on it.
class HostileTraining : public ::testing::Test {
 protected:
  void SetUp() override { build_store(data_, store_, 12000, 3, ""); }

  static void build_store(const fs::path& data, const fs::path& store, int frames, int seed,
                          const std::string& extra) {
    std::string output;
    ASSERT_EQ(run_command(headroom(fmt::format("generate --out '{}' --frames {} --seed {}",
                                               data.string(), frames, seed)),
                          &output),
              0)
        << output;
    ASSERT_EQ(
        run_command(headroom(fmt::format("preprocess '{}' --out '{}' --force --no-progress {}",
                                         data.string(), store.string(), extra)),
                    &output),
        0)
        << output;
  }

  std::string train(const std::string& stage, const fs::path& store, const fs::path& runs,
                    const std::string& extra) const {
    return headroom(fmt::format(
        "{} --store '{}' --runs-dir '{}' --threads 1 --progress false --batch-size 64 {}", stage,
        store.string(), runs.string(), extra));
  }

  // A run of `--max-epochs epochs` that was killed once its last last.pt was written, before
  // result.json: what the same command resumes.
  fs::path interrupted_run(const fs::path& runs, int epochs, const std::string& preset) const {
    std::string output;
    EXPECT_EQ(run_command(train("normal", store_, runs,
                                fmt::format("--preset {} --max-epochs {}", preset, epochs)),
                          &output),
              0)
        << output;
    const auto stage = runs / "store" / "student_normal";
    fs::remove(stage / "result.json");
    return stage;
  }

  TempDir dir_;
  fs::path data_ = dir_ / "data";
  fs::path store_ = dir_ / "store";
};

// Item 5: a 3-epoch last.pt of the same preset from a store of other data, copied into a killed
// 2-epoch run, "resumed after epoch 3" (past --max-epochs 2) and the stage counted as complete
// with the other store's validation metrics. So did another model's last.pt (a GCN's in a GAT
// run), until its tensors failed to load.
TEST_F(HostileTraining, ALastPtOfAnotherRunIsNotResumed) {
  const auto other_store = dir_ / "other" / "store";
  build_store(dir_ / "other" / "data", other_store, 16000, 5, "");
  std::string output;
  ASSERT_EQ(run_command(train("normal", other_store, dir_ / "other_runs",
                              "--preset gat,student --max-epochs 3"),
                        &output),
            0)
      << output;
  const auto foreign = dir_ / "other_runs" / "store" / "student_normal" / "last.pt";

  const auto stage = interrupted_run(dir_ / "runs", 2, "gat,student");
  const auto own = read_bytes(stage / "last.pt");
  const auto metrics = read_bytes(stage / "metrics.jsonl");
  const auto resume = train("normal", store_, dir_ / "runs", "--preset gat,student --max-epochs 2");

  fs::copy_file(foreign, stage / "last.pt", fs::copy_options::overwrite_existing);
  EXPECT_NE(run_command(resume, &output), 0) << output;
  EXPECT_FALSE(contains(output, "resuming")) << output;
  EXPECT_TRUE(contains(output, "last.pt: was written by another run")) << output;
  EXPECT_TRUE(contains(output, "store.content (was")) << output;
  EXPECT_TRUE(contains(output, "max_epochs (was 3, now 2)")) << output;
  EXPECT_TRUE(contains(output, "--resume false")) << output;
  EXPECT_FALSE(fs::exists(stage / "result.json")) << "the stage was counted as complete";
  EXPECT_EQ(read_bytes(stage / "metrics.jsonl"), metrics) << "the refused run changed the stage";

  // Another model's last.pt on this store: refused by what differs, not by a missing tensor.
  ASSERT_EQ(
      run_command(train("normal", store_, dir_ / "gcn_runs", "--preset gcn,student --max-epochs 2"),
                  &output),
      0)
      << output;
  fs::copy_file(dir_ / "gcn_runs" / "store" / "student_normal_gcn" / "last.pt", stage / "last.pt",
                fs::copy_options::overwrite_existing);
  EXPECT_NE(run_command(resume, &output), 0) << output;
  EXPECT_TRUE(contains(output, "model (was \"gcn\", now \"gat\")")) << output;
  EXPECT_FALSE(contains(output, "No such serialized tensor")) << output;

  // The run's own last.pt still resumes, and the stage ends complete.
  write_text_file(stage / "last.pt", own);
  ASSERT_EQ(run_command(resume, &output), 0) << output;
  EXPECT_TRUE(contains(output, "after epoch 2")) << output;
  EXPECT_TRUE(fs::exists(stage / "result.json"));
}

// A best.pt copied from another store's run into this store's run directory was evaluated (and
// reused as the finished stage) without a word: the store check read the config.json beside it,
// which speaks for the directory, not the file. best.pt records its own store now, and is checked
// by that record. (Mutation seen to fail: require_trained_on without the checkpoint's record.)
TEST_F(HostileTraining, ABestPtOfAnotherStoreIsRefusedWhereverItIsCopied) {
  const auto other_store = dir_ / "other" / "store";
  build_store(dir_ / "other" / "data", other_store, 16000, 5, "");
  std::string output;
  for (const auto& [store, runs] :
       {std::pair{store_, dir_ / "runs"}, std::pair{other_store, dir_ / "other_runs"}})
    ASSERT_EQ(
        run_command(train("normal", store, runs, "--preset gat,student --max-epochs 1"), &output),
        0)
        << output;
  const auto stage = dir_ / "runs" / "store" / "student_normal";
  fs::copy_file(dir_ / "other_runs" / "store" / "student_normal" / "best.pt", stage / "best.pt",
                fs::copy_options::overwrite_existing);
  EXPECT_NE(
      run_command(headroom(fmt::format("evaluation --store '{}' --models '{}' --threads 1 "
                                       "--runs-dir '{}' --progress false",
                                       store_.string(), stage.string(), (dir_ / "eval").string())),
                  &output),
      0)
      << output;
  EXPECT_TRUE(contains(output,
                       "best.pt: trained on another store than the one it is to be "
                       "evaluated on (differs in: store."))
      << output;
}

// --teacher-path naming the student's own run directory was accepted: the student overwrites that
// best.pt while it trains, so a resumed run would distill from another teacher than the one it
// began with. Refused, naming the flag. (Mutation seen to fail: load_teacher without
// require_teacher_outside.)
TEST_F(HostileTraining, AStudentIsNotItsOwnTeacher) {
  std::string output;
  const auto runs = dir_ / "runs";
  ASSERT_EQ(run_command(train("autoencoder", store_, runs,
                              "--preset vgae,teacher --max-epochs 1 --vgae-hidden 16,8 --latent 4"),
                        &output),
            0)
      << output;
  const auto teacher = runs / "store" / "teacher_autoencoder";
  ASSERT_EQ(run_command(train("autoencoder", store_, runs,
                              "--preset vgae,student --max-epochs 1 --use-kd yes --teacher-path '" +
                                  teacher.string() + "'"),
                        &output),
            0)
      << output;
  const auto student = runs / "store" / "student_autoencoder_kd";
  ASSERT_TRUE(fs::exists(student / "best.pt")) << output;
  const auto before = read_bytes(student / "best.pt");
  EXPECT_NE(run_command(train("autoencoder", store_, runs,
                              "--preset vgae,student --max-epochs 2 --use-kd yes --resume false "
                              "--teacher-path '" +
                                  student.string() + "'"),
                        &output),
            0)
      << output;
  EXPECT_TRUE(contains(output, "is this stage's own best.pt")) << output;
  EXPECT_EQ(read_bytes(student / "best.pt"), before);
}

// Item 10: damaged run files ended runs with messages that named no file: "PytorchStreamReader
// failed reading zip archive", nlohmann's type errors for a metrics line {"epoch":"x"}, a
// config.json of [1,2] or a result.json field of the wrong type. Each now names the file, the
// field and the cause, and --resume false still starts over.
TEST_F(HostileTraining, DamagedRunFilesAreNamedWithTheFieldAndTheCause) {
  const auto stage = interrupted_run(dir_ / "runs", 2, "gat,student");
  const auto resume = train("normal", store_, dir_ / "runs", "--preset gat,student --max-epochs 2");
  std::string output;

  const auto state = read_bytes(stage / "last.pt");
  write_text_file(stage / "last.pt", state.substr(0, state.size() / 2));
  EXPECT_NE(run_command(resume, &output), 0) << output;
  EXPECT_TRUE(contains(output, "last.pt: cannot be read as the stage's resumable state")) << output;
  EXPECT_TRUE(contains(output, "--resume false")) << output;
  write_text_file(stage / "last.pt", state);

  const auto metrics = read_bytes(stage / "metrics.jsonl");
  write_text_file(stage / "metrics.jsonl", metrics + "{\"epoch\":\"x\"}\n");
  const auto line = std::count(metrics.begin(), metrics.end(), '\n') + 1;
  EXPECT_NE(run_command(resume, &output), 0) << output;
  EXPECT_TRUE(contains(output, fmt::format("metrics.jsonl:{}: not a metrics line headroom writes "
                                           "(field \"epoch\" is \"x\", not a whole number)",
                                           line)))
      << output;
  EXPECT_FALSE(contains(output, "json.exception")) << output;
  write_text_file(stage / "metrics.jsonl", metrics);

  const auto config = read_bytes(stage / "config.json");
  write_text_file(stage / "config.json", "[1,2]\n");
  EXPECT_NE(run_command(resume, &output), 0) << output;
  EXPECT_TRUE(contains(output, "config.json: not a run configuration headroom wrote")) << output;
  EXPECT_TRUE(contains(output, "but a JSON array")) << output;
  EXPECT_FALSE(contains(output, "json.exception")) << output;
  write_text_file(stage / "config.json", config);

  write_text_file(stage / "result.json", "{\"training\": {\"epochs\": \"x\"}}\n");
  EXPECT_NE(run_command(resume, &output), 0) << output;
  EXPECT_TRUE(contains(output,
                       "result.json: not the result headroom writes: field "
                       "\"training.epochs\" is \"x\""))
      << output;
  EXPECT_FALSE(contains(output, "json.exception")) << output;

  // Starting over is what --resume false is for, whatever the directory holds.
  write_text_file(stage / "config.json", "[1,2]\n");
  ASSERT_EQ(run_command(resume + " --resume false", &output), 0) << output;
  EXPECT_EQ(testing::read_metrics(stage / "metrics.jsonl").size(), 2U);
}

// Item 10: a run whose loss went non-finite trained on and ended with "roc_auc: a score is NaN",
// naming no loss, epoch or store and writing no metrics line. It now stops at the first
// non-finite loss, saying which, where and on what, and records the epoch that diverged.
TEST_F(HostileTraining, ADivergedRunStopsAtTheFirstNonFiniteLossNamingIt) {
  std::string output;
  EXPECT_NE(run_command(train("normal", store_, dir_ / "runs",
                              "--preset gat,student --max-epochs 3 --learning-rate 1e308"),
                        &output),
            0)
      << output;
  EXPECT_TRUE(contains(output, "training diverged: the ")) << output;
  EXPECT_TRUE(contains(output, "in epoch 1")) << output;
  EXPECT_TRUE(contains(output, "on store " + store_.string())) << output;
  EXPECT_TRUE(contains(output, "--learning-rate")) << output;
  EXPECT_FALSE(contains(output, "a score is NaN")) << output;
  const auto stage = dir_ / "runs" / "store" / "student_normal";
  EXPECT_FALSE(fs::exists(stage / "result.json"));
  const auto diverged = testing::read_metrics(stage / "metrics.jsonl", "diverged");
  ASSERT_EQ(diverged.size(), 1U) << read_bytes(stage / "metrics.jsonl");
  EXPECT_EQ(diverged[0].at("epoch"), 0);
  EXPECT_TRUE(testing::read_metrics(stage / "metrics.jsonl").empty());
  EXPECT_TRUE(contains(read_bytes(stage / "log.txt"), "stopped: the "))
      << read_bytes(stage / "log.txt");

  // Finite features of 3e38 overflow the first layer: the first step's loss is not finite.
  const auto huge = dir_ / "huge_features";
  write_graph_store(huge, 4, 3e38F, 0.25);
  EXPECT_NE(run_command(train("normal", huge, dir_ / "runs", "--preset gat,student --max-epochs 2"),
                        &output),
            0)
      << output;
  EXPECT_TRUE(contains(output, "training diverged: the training loss is")) << output;
  EXPECT_TRUE(contains(output, "in epoch 1 (step 1)")) << output;
  EXPECT_TRUE(contains(output, "No epoch finished with finite losses")) << output;
  EXPECT_FALSE(contains(output, "a score is NaN")) << output;
}

// Item 6: a store built with --val-fraction 0 had early stopping, best.pt and the decision
// threshold chosen on the training graphs, without a word. Every stage that validates refuses
// it, naming the flag, before anything is written.
TEST_F(HostileTraining, AStoreWithoutValidationGraphsIsRefusedNamingTheFlag) {
  const auto store = dir_ / "no_validation";
  std::string output;
  ASSERT_EQ(run_command(headroom(fmt::format("preprocess '{}' --out '{}' --val-fraction 0 "
                                             "--no-progress",
                                             data_.string(), store.string())),
                        &output),
            0)
      << output;
  for (const auto& [stage, what] :
       {std::pair<std::string, std::string>{"normal", "no validation graphs"},
        {"autoencoder", "no normal validation graphs"}}) {
    EXPECT_NE(run_command(train(stage, store, dir_ / "runs", "--max-epochs 1"), &output), 0)
        << output;
    EXPECT_TRUE(contains(output, what)) << output;
    EXPECT_TRUE(contains(output, "--val-fraction")) << output;
    EXPECT_FALSE(fs::exists(dir_ / "runs" / "no_validation")) << stage << " wrote a run directory";
  }
}

// Item 9: a 16,777,216-identity embedding was allocated past --memory-budget 500MB, and the error
// then blamed a 5 KB allocation. The model's size is predicted from its configuration and refused
// by name before it is built.
TEST_F(HostileTraining, AModelLargerThanTheBudgetIsRefusedBeforeItIsBuilt) {
  const auto store = dir_ / "vocabulary";
  write_graph_store(store, 1U << 24, 0.5F, 0.25);
  std::string output;
  EXPECT_NE(run_command(train("normal", store, dir_ / "runs",
                              "--preset gat,student --max-epochs 1 --memory-budget 500MB"),
                        &output),
            0)
      << output;
  EXPECT_TRUE(contains(output, "stage normal: the gat model has")) << output;
  EXPECT_TRUE(contains(output, "more than the memory budget")) << output;
  EXPECT_TRUE(contains(output, "its identity embedding alone (16777216 identities")) << output;
  EXPECT_TRUE(contains(output, "--memory-budget")) << output;
  EXPECT_FALSE(fs::exists(dir_ / "runs" / "vocabulary")) << "the refused stage wrote a directory";

  // A store like it with 16 identities trains under the same budget: only the size is refused.
  write_graph_store(dir_ / "small_vocabulary", 16, 0.5F, 0.25);
  EXPECT_EQ(run_command(train("normal", dir_ / "small_vocabulary", dir_ / "runs",
                              "--preset gat,student --max-epochs 1 --memory-budget 500MB"),
                        &output),
            0)
      << output;
}

}  // namespace
}  // namespace headroom
