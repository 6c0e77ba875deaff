// The training stages through the command line: the whole chain on a small synthetic dataset
// (run directories, metrics, best checkpoints, evaluation, summary) and the stage errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "headroom/train/families/model_checkpoint.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

std::string binary() { return HEADROOM_BINARY; }

std::size_t count_lines(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::size_t lines = 0;
  std::string line;
  while (std::getline(in, line)) ++lines;
  return lines;
}

nlohmann::json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(TrainingCli, RunChainsEveryStageAndSummarises) {
  testing::TempDir dir;
  std::string output;
  const auto command = "cd " + dir.path().string() + " && " + binary() +
                       " run --frames 30000 --max-epochs 2 --batch-size 128 --threads 2"
                       " --vgae-hidden 32,16 --latent 8 --label-free-windows 10"
                       " --progress false 2>&1";
  ASSERT_EQ(testing::run_command(command, &output), 0) << output;
  const auto runs = dir / "runs" / "synthetic";
  for (const char* stage : {"teacher_autoencoder", "teacher_curriculum", "student_autoencoder_kd",
                            "student_curriculum_kd"}) {
    SCOPED_TRACE(stage);
    EXPECT_TRUE(std::filesystem::exists(runs / stage / "best.pt"));
    EXPECT_TRUE(std::filesystem::exists(runs / stage / "last.pt"));
    EXPECT_EQ(count_lines(runs / stage / "metrics.jsonl"), 2U);
    const auto config = read_json(runs / stage / "config.json");
    EXPECT_EQ(config["config"]["max_epochs"], 2);
    const auto result = read_json(runs / stage / "result.json");
    EXPECT_EQ(result["training"]["epochs"], 2);
  }
  // The student GAT learned from the teacher GAT.
  EXPECT_TRUE(read_json(runs / "student_curriculum_kd" / "config.json")["config"]["use_kd"]);
  const auto evaluation = read_json(runs / "evaluation" / "evaluation.json");
  ASSERT_TRUE(evaluation.contains("teacher_curriculum"));
  ASSERT_TRUE(evaluation.contains("student_curriculum_kd"));
  // The autoencoders are evaluated as anomaly detectors, decided at a threshold calibrated on the
  // validation split; the classifiers at 0.5 and at their stored calibrated threshold.
  for (const char* vgae : {"teacher_autoencoder", "student_autoencoder_kd"}) {
    ASSERT_TRUE(evaluation.contains(vgae)) << vgae;
    // By default, the mean z of the 10 most anomalous nodes (against normal nodes of their kind).
    EXPECT_EQ(evaluation[vgae]["score"], "anomaly score (mean z of the 10 most anomalous nodes)");
    EXPECT_GT(evaluation[vgae]["decision_threshold"].get<double>(), 0.0);
    EXPECT_FALSE(evaluation[vgae].contains("calibrated_threshold"));
  }
  // The students' scores fused by the DQN and by logistic regression, evaluated like the others.
  for (const char* fusion : {"fusion_dqn", "fusion_logistic"}) {
    ASSERT_TRUE(evaluation.contains(fusion)) << fusion;
    EXPECT_EQ(evaluation[fusion]["score"], "fused attack log-odds");
    EXPECT_EQ(evaluation[fusion]["decision_threshold"], 0.0);
    // Fusion epochs are their own (--fusion-epochs), not the graph models' --max-epochs.
    const auto fused = read_json(runs / fusion / "result.json");
    EXPECT_EQ(count_lines(runs / fusion / "metrics.jsonl"),
              fused["training"]["epochs"].get<std::size_t>());
    EXPECT_GT(fused["training"]["epochs"].get<int>(), 2);
  }
  // With the baseline on, the hybrid: the logistic fusion of the students and the baseline.
  ASSERT_TRUE(evaluation.contains("hybrid_logistic"));
  EXPECT_EQ(evaluation["hybrid_logistic"]["hybrid"], true);
  EXPECT_FALSE(evaluation["fusion_logistic"].contains("hybrid"));
  EXPECT_NE(output.find("== hybrid_logistic =="), std::string::npos) << output;
  // Classifiers are decided on their attack log-odds: even odds (P(attack) 0.5) is 0.
  EXPECT_EQ(evaluation["student_curriculum_kd"]["score"], "attack log-odds");
  EXPECT_EQ(evaluation["student_curriculum_kd"]["decision_threshold"], 0.0);
  EXPECT_TRUE(evaluation["student_curriculum_kd"].contains("calibrated_threshold"));
  for (const auto& group : evaluation["teacher_curriculum"]["groups"]) {
    const auto f1 = group["metrics"]["f1"];
    // Undefined (null) where a group holds no attack label: the attack-free validation windows.
    if (group["metrics"]["positives"] == 0) {
      EXPECT_TRUE(f1.is_null()) << group.dump();
      continue;
    }
    EXPECT_TRUE(f1.is_number());
    EXPECT_GE(f1.get<double>(), 0.0);
    EXPECT_LE(f1.get<double>(), 1.0);
  }
  // The summary: per condition, the best GNN model, the hybrid and the baseline at the label-free
  // decision, with the unseen attack marked, in at most 100 columns.
  const auto summary = output.find("F1 by test condition at the label-free decision");
  ASSERT_NE(summary, std::string::npos) << output;
  EXPECT_NE(output.find("test_02_known_vehicle_unknown_att~  spoofing*", summary),
            std::string::npos)
      << output.substr(summary);
  EXPECT_NE(output.find("best GNN model              F1  hybrid  baseline", summary),
            std::string::npos)
      << output.substr(summary);
  EXPECT_NE(output.find("peak RSS", summary), std::string::npos);
  std::istringstream summary_lines(output.substr(summary));
  for (std::string line; std::getline(summary_lines, line);) {
    if (line.rfind("report:", 0) == 0) break;
    EXPECT_LE(line.size(), 100U) << line;
  }
  // The scores behind every decision, per window, for every model and the baseline.
  const auto scores = runs / "evaluation" / "scores";
  EXPECT_TRUE(std::filesystem::exists(scores / "baseline.csv")) << scores;
  EXPECT_TRUE(std::filesystem::exists(scores / "student_curriculum_kd.csv"));
  EXPECT_TRUE(evaluation["baseline"]["groups"][1].contains("label_free_metrics"))
      << evaluation["baseline"]["groups"][1].dump();

  // A second run reuses every finished stage.
  ASSERT_EQ(testing::run_command(command, &output), 0) << output;
  EXPECT_NE(output.find("(reused)"), std::string::npos) << output;
  EXPECT_EQ(count_lines(runs / "teacher_curriculum" / "metrics.jsonl"), 2U);

  // Opt-in AdaBN: an autoencoder's label-free scores come from its BatchNorm statistics
  // re-estimated per test file; validation windows keep their scores, test windows change.
  const auto vgae_scores = scores / "student_autoencoder_kd.csv";
  EXPECT_EQ(read_text(vgae_scores).find("label_free_score"), std::string::npos);
  ASSERT_EQ(testing::run_command("cd " + dir.path().string() + " && " + binary() +
                                     " evaluation --store stores/synthetic --label-free-windows 10"
                                     " --label-free-batch-norm --no-baseline --progress false"
                                     " --models runs/synthetic/student_autoencoder_kd 2>&1",
                                 &output),
            0)
      << output;
  std::istringstream rows(read_text(vgae_scores));
  std::string row;
  std::getline(rows, row);
  EXPECT_NE(row.find(",score,label_free_score"), std::string::npos) << row;
  std::size_t validation_changed = 0, test_changed = 0;
  for (; std::getline(rows, row);) {
    const auto last = row.rfind(',');
    const auto score = row.rfind(',', last - 1);
    const bool changed = row.substr(score + 1, last - score - 1) != row.substr(last + 1);
    (row.find(",validation,") != std::string::npos ? validation_changed : test_changed) += changed;
  }
  EXPECT_EQ(validation_changed, 0U);
  EXPECT_GT(test_changed, 0U);
}

// The chain on ID-agnostic graphs: every model takes its inputs from the store (32 frequency
// ranks, 19 node features), trains, and is evaluated.
TEST(TrainingCli, RunOnFrequencyRankIdentityWithTimingAndPayloadFeatures) {
  testing::TempDir dir;
  std::string output;
  const auto command = "cd " + dir.path().string() + " && " + binary() +
                       " run --frames 20000 --max-epochs 1 --batch-size 128 --threads 2"
                       " --node-identity frequency-rank --node-features timing,payload"
                       " --vgae-hidden 32,16 --latent 8 --progress false 2>&1";
  ASSERT_EQ(testing::run_command(command, &output), 0) << output;
  const auto runs = dir / "runs" / "synthetic";
  for (const char* stage : {"teacher_autoencoder", "teacher_curriculum", "student_autoencoder_kd",
                            "student_curriculum_kd"}) {
    SCOPED_TRACE(stage);
    std::ifstream log(runs / stage / "log.txt");
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("32 identities, 19 node features"), std::string::npos) << text;
  }
  const auto evaluation = read_json(runs / "evaluation" / "evaluation.json");
  for (const char* model : {"student_curriculum_kd", "student_autoencoder_kd", "fusion_dqn"})
    EXPECT_TRUE(evaluation.contains(model)) << model;
}

class TrainingCliErrors : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    store_ = testing::build_synthetic_store(dir_->path(), 20000);
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string stage(const std::string& args) {
    return binary() + " " + args + " --store " + store_.string() + " --runs-dir " +
           (dir_->path() / "runs").string() + " --progress false 2>&1";
  }
  static inline testing::TempDir* dir_ = nullptr;
  static inline std::filesystem::path store_;
};

// `run` rebuilds its own store every run, one built from the dataset it is given; a store the user
// built from another dataset is replaced only with --force.
TEST_F(TrainingCliErrors, RunRefusesToReplaceAStoreOfAnotherDataset) {
  std::string output;
  const auto other = dir_->path() / "other-dataset";
  ASSERT_EQ(testing::run_command(
                binary() + " generate --frames 5000 --out '" + other.string() + "' 2>&1", &output),
            0)
      << output;
  const auto manifest = store_ / "manifest.json";
  const auto before = read_text(manifest);
  EXPECT_NE(
      testing::run_command(binary() + " run '" + other.string() + "' --store '" + store_.string() +
                               "' --runs-dir '" + (dir_->path() / "other-runs").string() +
                               "' --progress false 2>&1",
                           &output),
      0);
  EXPECT_NE(output.find("holds a CAN windows store built from"), std::string::npos) << output;
  EXPECT_NE(output.find("pass --force to replace it"), std::string::npos) << output;
  EXPECT_EQ(read_text(manifest), before);
}

// `run` uses an existing synthetic dataset as it is, and says so when it was generated with
// another size or seed than the run asks for (the run then stops at a store path that is a file).
TEST_F(TrainingCliErrors, RunSaysWhenTheSyntheticDatasetIsNotTheOneAskedFor) {
  std::string output;
  const auto not_a_store = dir_->path() / "not-a-store";
  testing::write_text_file(not_a_store, "mine");
  EXPECT_NE(testing::run_command(
                binary() + " run --synthetic-dir '" + (dir_->path() / "data").string() +
                    "' --frames 25000 --store '" + not_a_store.string() + "' --runs-dir '" +
                    (dir_->path() / "note-runs").string() + "' --progress false 2>&1",
                &output),
            0);
  EXPECT_NE(output.find("it holds 20000 frames of seed"), std::string::npos) << output;
  EXPECT_NE(output.find("not the 25000 frames of seed"), std::string::npos) << output;
  EXPECT_EQ(read_text(not_a_store), "mine");
}

// A synthetic.json that is not headroom's (unreadable, edited, [1,2]) made `run` use the dataset
// without a word about what it holds. (Mutation seen to fail: can_dataset without the note.)
TEST_F(TrainingCliErrors, RunSaysWhenSyntheticJsonIsNotOneHeadroomWrote) {
  std::string output;
  const auto data = dir_->path() / "odd-synthetic";
  testing::write_text_file(data / "synthetic.json", "[1,2]");
  const auto not_a_store = dir_->path() / "not-a-store-2";
  testing::write_text_file(not_a_store, "mine");
  EXPECT_NE(
      testing::run_command(binary() + " run --synthetic-dir '" + data.string() + "' --store '" +
                               not_a_store.string() + "' --runs-dir '" +
                               (dir_->path() / "odd-runs").string() + "' --progress false 2>&1",
                           &output),
      0);
  EXPECT_NE(output.find("its synthetic.json is not one `headroom generate` wrote"),
            std::string::npos)
      << output;
  EXPECT_EQ(read_text(not_a_store), "mine");
}

TEST_F(TrainingCliErrors, DistillationWithoutTeacherIsRefused) {
  std::string output;
  EXPECT_EQ(testing::run_command(stage("normal --preset gat,student --use-kd yes"), &output), 1);
  EXPECT_NE(output.find("--teacher-path"), std::string::npos) << output;
}

// Values that used to run with the defaults in their place are refused, naming the flag.
TEST_F(TrainingCliErrors, NanNegativeAndZeroValuesAreRefused) {
  for (const char* args : {"normal --learning-rate nan", "normal --learning-rate -1",
                           "normal --threads -3", "normal --memory-budget 0",
                           "normal --host-memory-budget 0B", "normal --kd-temperature nan"}) {
    std::string output;
    EXPECT_NE(testing::run_command(stage(args), &output), 0) << args;
    const std::string flag = std::string(args).substr(7, std::string(args).find(' ', 7) - 7);
    EXPECT_NE(output.find(flag), std::string::npos) << args << "\n" << output;
  }
}

// Evaluation's own values are checked before anything is read, naming the flag: a negative window
// count used to wrap to a huge one, and a zero fence failed deep inside the threshold.
TEST_F(TrainingCliErrors, BadEvaluationValuesAreRefusedByFlag) {
  for (const char* args : {"evaluation --label-free-windows -1", "evaluation --label-free-fence 0",
                           "evaluation --label-free-fence nan", "evaluation --anomaly-top-nodes -2",
                           "evaluation --target-fpr 1", "fusion --label-free-windows -5"}) {
    std::string output;
    EXPECT_NE(testing::run_command(stage(args), &output), 0) << args;
    const std::string text(args);
    const auto flag_begin = text.find("--");
    const std::string flag = text.substr(flag_begin, text.find(' ', flag_begin) - flag_begin);
    EXPECT_NE(output.find(flag), std::string::npos) << args << "\n" << output;
  }
}

TEST_F(TrainingCliErrors, WrongModelForStageIsRefused) {
  std::string output;
  EXPECT_EQ(testing::run_command(stage("autoencoder --preset gat,teacher"), &output), 1);
  EXPECT_NE(output.find("--preset vgae"), std::string::npos) << output;
}

TEST_F(TrainingCliErrors, BadPresetAndPrecisionAreRefused) {
  std::string output;
  EXPECT_EQ(testing::run_command(stage("normal --preset gat,huge"), &output), 1);
  EXPECT_NE(output.find("huge"), std::string::npos) << output;
  EXPECT_EQ(testing::run_command(stage("normal --precision 16-mixed"), &output), 1);
  EXPECT_NE(output.find("cuda"), std::string::npos) << output;
}

TEST_F(TrainingCliErrors, CurriculumWithoutAutoencoderNamesTheMissingRun) {
  std::string output;
  EXPECT_EQ(testing::run_command(stage("curriculum --preset gat,teacher"), &output), 1);
  EXPECT_NE(output.find("headroom autoencoder"), std::string::npos) << output;
}

TEST_F(TrainingCliErrors, TeacherOfTheWrongKindIsRefused) {
  std::string output;
  ASSERT_EQ(testing::run_command(stage("normal --preset gat,teacher --max-epochs 1 --hidden 4 "
                                       "--heads 2"),
                                 &output),
            0)
      << output;
  const auto teacher = (dir_->path() / "runs" / "store" / "teacher_normal").string();
  EXPECT_EQ(testing::run_command(stage("autoencoder --preset vgae,student --use-kd true "
                                       "--teacher-path " +
                                       teacher),
                                 &output),
            1);
  EXPECT_NE(output.find("holds a gat model, expected vgae"), std::string::npos) << output;
}

// A flag that a command would ignore is refused before anything runs: `autoencoder
// --fusion-method logistic --models foo` used to train as if neither were there.
TEST_F(TrainingCliErrors, FlagsThatDoNotApplyToTheCommandAreRefused) {
  for (const char* args :
       {"autoencoder --preset vgae,teacher --fusion-method logistic", "autoencoder --models foo",
        "normal --curriculum-start-ratio 2", "normal --autoencoder-path x", "curriculum --models x",
        "fusion --max-epochs 3", "fusion --use-kd true", "fusion --hidden 8",
        "evaluation --max-epochs 3", "evaluation --learning-rate 0.1",
        "evaluation --fusion-method logistic", "plan --calibration fpr"}) {
    std::string output;
    EXPECT_NE(testing::run_command(stage(args), &output), 0) << args << "\n" << output;
    const std::string arguments(args);
    const auto flag_start = arguments.rfind("--");  // the one that does not apply
    const auto flag = arguments.substr(flag_start, arguments.find(' ', flag_start) - flag_start);
    EXPECT_NE(output.find(flag), std::string::npos) << args << "\n" << output;
    EXPECT_FALSE(std::filesystem::exists(dir_->path() / "runs" / "store" / "teacher_autoencoder"))
        << args;
  }
  // What each command reads is still offered.
  std::string help;
  ASSERT_EQ(testing::run_command(binary() + " evaluation --help", &help), 0);
  for (const char* flag : {"--models", "--vehicle-calibration", "--calibration", "--target-fpr",
                           "--eval-batch-size", "--memory-budget"})
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
  ASSERT_EQ(testing::run_command(binary() + " fusion --help", &help), 0);
  for (const char* flag : {"--fusion-method", "--patience", "--learning-rate", "--seed"})
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
}

// A model flag that the preset's family does not read is refused the same way; `run`, which
// trains the VGAE and the GAT with one flag set, keeps them all (TrainingCli.* run it with
// --vgae-hidden and --latent).
TEST_F(TrainingCliErrors, ModelFlagsOfAnotherFamilyAreRefused) {
  struct Case {
    const char* args;
    const char* expected;
  };
  for (const Case& c :
       {Case{"normal --preset gat,teacher --latent 8", "--latent applies to the vgae family"},
        Case{"normal --preset gcn,teacher --heads 2",
             "--heads applies to the gat and vgae families"},
        Case{"autoencoder --preset vgae,teacher --fc-layers 2", "--fc-layers applies to the gat"},
        Case{"plan --preset gat,student --vgae-hidden 8,4", "--vgae-hidden applies to the vgae"}}) {
    std::string output;
    EXPECT_EQ(testing::run_command(stage(c.args), &output), 1) << c.args;
    EXPECT_NE(output.find(c.expected), std::string::npos) << c.args << "\n" << output;
  }
}

TEST_F(TrainingCliErrors, BooleansAcceptTheUsualSpellings) {
  std::string output;
  for (const char* value : {"true", "false", "1", "0", "yes", "no"}) {
    EXPECT_EQ(testing::run_command(stage(std::string("normal --preset gat,student --max-epochs 1 "
                                                     "--resume false --pack-batches ") +
                                         value),
                                   &output),
              0)
        << value << ": " << output;
  }
  EXPECT_NE(testing::run_command(stage("normal --pack-batches maybe"), &output), 0);
  EXPECT_NE(output.find("maybe"), std::string::npos) << output;
}

// --gradient-checkpointing is auto, on or off (true and false still read, as when it was a
// boolean); the run's configuration records the word.
TEST_F(TrainingCliErrors, GradientCheckpointingIsAutoOnOrOff) {
  std::string output;
  for (const char* value : {"auto", "on", "off", "true", "false"}) {
    EXPECT_EQ(testing::run_command(stage(std::string("normal --preset gat,student --max-epochs 1 "
                                                     "--resume false --gradient-checkpointing ") +
                                         value),
                                   &output),
              0)
        << value << ": " << output;
  }
  EXPECT_NE(testing::run_command(stage("normal --gradient-checkpointing maybe"), &output), 0);
  EXPECT_NE(output.find("maybe"), std::string::npos) << output;
}

}  // namespace
}  // namespace headroom

namespace headroom {
namespace {

// A VGAE evaluated on a store whose validation split holds no graph cannot be given a threshold:
// evaluation says so and goes on with the other models instead of failing the whole stage. No
// stage trains on such a store (HostileTraining.AStoreWithoutValidationGraphsIsRefusedNamingThe
// Flag), and a best.pt records the store it was trained on: the one way such a model reaches that
// store is a checkpoint of an older headroom (no store record) copied without its config.json,
// which the test writes by saving the trained model again without its record.
TEST(EvaluationOfAutoencoders, NoValidationGraphsMeansNotEvaluatedNotAFailure) {
  testing::TempDir dir;
  const std::string headroom = binary();
  std::string output;
  ASSERT_EQ(testing::run_command(
                headroom + " generate --out " + (dir / "data").string() + " --frames 20000 2>&1",
                &output),
            0)
      << output;
  for (const std::string store : {"store", "no_validation"})
    ASSERT_EQ(
        testing::run_command(headroom + " preprocess " + (dir / "data").string() + " --out " +
                                 (dir / store).string() + " --no-progress" +
                                 (store == "no_validation" ? " --val-fraction 0" : "") + " 2>&1",
                             &output),
        0)
        << output;
  const auto common = " --runs-dir " + (dir / "runs").string() + " --threads 1 --progress false";
  ASSERT_EQ(testing::run_command(headroom + " autoencoder --preset vgae,student --max-epochs 1 " +
                                     "--store " + (dir / "store").string() + common + " 2>&1",
                                 &output),
            0)
      << output;
  const auto copied = dir / "copied" / "student_autoencoder";
  std::filesystem::create_directories(copied);
  {
    auto loaded = train::load_autoencoder_checkpoint(
        dir / "runs" / "store" / "student_autoencoder" / "best.pt", torch::kCPU);
    loaded.info.store_identity = nullptr;  // as an older headroom wrote it
    train::save_model_checkpoint(copied / "best.pt", *loaded.model, loaded.info);
  }
  ASSERT_EQ(
      testing::run_command(headroom + " evaluation --models " + copied.string() + " --store " +
                               (dir / "no_validation").string() + common + " 2>&1",
                           &output),
      0)
      << output;
  EXPECT_NE(output.find("student_autoencoder: not evaluated"), std::string::npos) << output;
}

// Unlabelled logs (a column mapping without a label column: every frame normal) are said to be
// unlabelled at each step: preprocess names the splits, the classifier's training warns, and
// evaluation prints n/a where it printed F1 0 beside accuracy 1.0.
TEST(UnlabelledData, PreprocessTrainingAndEvaluationSaySo) {
  testing::TempDir dir;
  const std::string headroom = binary();
  std::string output;
  ASSERT_EQ(testing::run_command(
                headroom + " generate --out " + (dir / "data").string() + " --frames 20000 2>&1",
                &output),
            0)
      << output;
  ASSERT_EQ(
      testing::run_command(headroom + " preprocess " + (dir / "data").string() + " --out " +
                               (dir / "store").string() +
                               " --format csv --csv-timestamp timestamp --csv-id arbitration_id"
                               " --csv-payload data_field --no-progress 2>&1",
                           &output),
      0)
      << output;
  EXPECT_NE(output.find("warning: train: no attack labels"), std::string::npos) << output;
  EXPECT_NE(output.find("warning: test/test_01_known_vehicle_known_attack: no attack labels"),
            std::string::npos)
      << output;

  const auto common = " --store " + (dir / "store").string() + " --runs-dir " +
                      (dir / "runs").string() + " --threads 1 --progress false";
  ASSERT_EQ(
      testing::run_command(
          headroom + " normal --preset gat,student --max-epochs 1" + common + " 2>&1", &output),
      0)
      << output;
  EXPECT_NE(output.find("WARNING: the training split has no attack labels"), std::string::npos)
      << output;

  ASSERT_EQ(testing::run_command(headroom + " evaluation --models " +
                                     (dir / "runs" / "store" / "student_normal").string() + common +
                                     " 2>&1",
                                 &output),
            0)
      << output;
  EXPECT_NE(output.find("WARNING: test_01_known_vehicle_known_attack: no attack labels"),
            std::string::npos)
      << output;
  const auto evaluation = read_json(dir / "runs" / "store" / "evaluation" / "evaluation.json");
  ASSERT_TRUE(evaluation.contains("student_normal")) << evaluation.dump(1);
  for (const auto& group : evaluation["student_normal"]["groups"]) {
    EXPECT_TRUE(group["metrics"]["f1"].is_null()) << group.dump();
    EXPECT_TRUE(group["metrics"]["accuracy"].is_null()) << group.dump();
  }
}

}  // namespace
}  // namespace headroom
