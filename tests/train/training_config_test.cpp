// The option groups of TrainingConfig: each validates its own fields and names the flag; the
// whole configuration still serialises to the flat config.json keys.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "headroom/train/config/training_config.hpp"
#include "headroom/train/fusion/fusion_stage.hpp"
#include "headroom/train/stages/autoencoder_stage.hpp"
#include "headroom/train/stages/classifier_stage.hpp"

namespace headroom::train {
namespace {

// The message of the std::invalid_argument that `call` throws ("" when it does not throw).
std::string rejection(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

TEST(TrainingConfigGroups, DefaultsOfEveryGroupAreValid) {
  TrainingConfig config;
  config.stage = kNormalStage;
  config.run.store = "some-store";
  EXPECT_NO_THROW(validate(config));
  EXPECT_NO_THROW(config.model.validate());
  EXPECT_NO_THROW(config.optimisation.validate());
  EXPECT_NO_THROW(config.memory.validate());
  EXPECT_NO_THROW(config.distillation.validate());
  EXPECT_NO_THROW(config.curriculum.validate());
}

TEST(TrainingConfigGroups, EachGroupNamesTheFlagItRejects) {
  ModelOptions model;
  model.heads = 0;
  EXPECT_NE(rejection([&] { model.validate(); }).find("--heads"), std::string::npos);
  model = {};
  model.family = "transformer";
  EXPECT_FALSE(rejection([&] { model.validate(); }).empty());

  OptimisationOptions optimisation;
  optimisation.batch_size = 0;
  EXPECT_NE(rejection([&] { optimisation.validate(); }).find("--batch-size"), std::string::npos);

  MemoryOptions memory;
  memory.target_utilization = 1.5;
  EXPECT_NE(rejection([&] { memory.validate(); }).find("--target-utilization"), std::string::npos);

  DistillationOptions distillation;
  distillation.enabled = true;  // without a teacher
  EXPECT_NE(rejection([&] { distillation.validate(); }).find("--teacher-path"), std::string::npos);

  CurriculumOptions curriculum;
  curriculum.schedule.start_percentile = 90;
  curriculum.schedule.percentile_growth = 20;  // past the 100th percentile by the last epoch
  EXPECT_NE(rejection([&] { curriculum.validate(); }).find("--curriculum-percentile-growth"),
            std::string::npos);

  RunOptions run;
  run.store = "s";
  run.precision = "16-mixed";  // on the CPU
  EXPECT_NE(rejection([&] { run.validate(); }).find("--precision 16-mixed"), std::string::npos);
}

// NaN passes every `x < 0` check; each number a flag takes is rejected as NaN, naming the flag.
TEST(TrainingConfigGroups, NotANumberIsRefusedEverywhere) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  OptimisationOptions optimisation;
  optimisation.learning_rate = nan;
  EXPECT_NE(rejection([&] { optimisation.validate(); }).find("--learning-rate"), std::string::npos);
  optimisation = {};
  optimisation.learning_rate = -1;
  EXPECT_NE(rejection([&] { optimisation.validate(); }).find("--learning-rate"), std::string::npos);
  optimisation = {};
  optimisation.weight_decay = inf;
  EXPECT_NE(rejection([&] { optimisation.validate(); }).find("--weight-decay"), std::string::npos);
  optimisation = {};
  optimisation.gradient_clip = nan;
  EXPECT_NE(rejection([&] { optimisation.validate(); }).find("--gradient-clip"), std::string::npos);

  DistillationOptions distillation;
  distillation.temperature = nan;
  EXPECT_NE(rejection([&] { distillation.validate(); }).find("--kd-temperature"),
            std::string::npos);
  distillation = {};
  distillation.alpha = nan;
  EXPECT_NE(rejection([&] { distillation.validate(); }).find("--kd-alpha"), std::string::npos);

  CurriculumOptions curriculum;
  curriculum.schedule.start_ratio = nan;
  EXPECT_NE(rejection([&] { curriculum.validate(); }).find("--curriculum-start-ratio"),
            std::string::npos);
  curriculum = {};
  curriculum.schedule.start_percentile = nan;
  EXPECT_NE(rejection([&] { curriculum.validate(); }).find("--curriculum-start-percentile"),
            std::string::npos);

  RunOptions run;
  run.store = "s";
  run.threads = -3;
  EXPECT_NE(rejection([&] { run.validate(); }).find("--threads"), std::string::npos);
}

TEST(TrainingConfigGroups, CrossGroupRulesStayInValidate) {
  TrainingConfig config;
  config.stage = kNormalStage;
  config.run.store = "s";
  config.distillation.enabled = true;
  config.distillation.teacher_path = "teacher.pt";
  // Each group is valid on its own; distilling a teacher-size model is not.
  EXPECT_NO_THROW(config.distillation.validate());
  EXPECT_NO_THROW(config.model.validate());
  EXPECT_NE(rejection([&] { validate(config); }).find("student"), std::string::npos);
  config.model.size = models::ModelSize::kStudent;
  EXPECT_NO_THROW(validate(config));
  config.stage = kAutoencoderStage;  // with a GAT
  EXPECT_NE(rejection([&] { validate(config); }).find("vgae"), std::string::npos);
}

TEST(TrainingConfigGroups, ConfigJsonStaysFlat) {
  TrainingConfig config;
  config.stage = kNormalStage;
  config.run.store = "stores/x";
  config.memory.budget = 1234;
  config.distillation.alpha = 0.25;
  config.curriculum.schedule.start_ratio = 2;
  const nlohmann::json json = config;
  EXPECT_EQ(json.at("memory_budget"), 1234);
  EXPECT_EQ(json.at("kd_alpha"), 0.25);
  EXPECT_EQ(json.at("model"), "gat");
  EXPECT_EQ(json.at("dataset"), "x");
  EXPECT_EQ(json.at("curriculum").at("start_ratio"), 2.0);
  for (const auto& group : {"run", "optimisation", "memory", "distillation", "evaluation"})
    EXPECT_FALSE(json.contains(group)) << group;
}

// What users train side by side in one --runs-dir gets a directory each: the README's fusion
// examples (students, then a teacher pair) and a GCN beside the GAT of the same stage collided
// ("holds a run with a different configuration").
TEST(RunDirectoryNames, ModelsAndFusionInputsTrainedSideBySideDoNotShareADirectory) {
  TrainingConfig config;
  config.run.store = "stores/hcrl_sa";
  config.run.runs_dir = "runs";
  config.stage = kNormalStage;
  config.model.size = models::ModelSize::kTeacher;
  EXPECT_EQ(run_directory(config), std::filesystem::path("runs/hcrl_sa/teacher_normal"));
  config.model.family = "gcn";
  EXPECT_EQ(run_directory(config), std::filesystem::path("runs/hcrl_sa/teacher_normal_gcn"));
  config.stage = kAutoencoderStage;
  config.model.family = "vgae";
  config.model.size = models::ModelSize::kStudent;
  config.distillation.enabled = true;
  EXPECT_EQ(run_directory(config), std::filesystem::path("runs/hcrl_sa/student_autoencoder_kd"));

  TrainingConfig fusion;
  fusion.run.store = "stores/hcrl_sa";
  fusion.run.runs_dir = "runs";
  fusion.stage = kFusionStage;
  EXPECT_EQ(run_directory(fusion), std::filesystem::path("runs/hcrl_sa/fusion_dqn"));
  fusion.fusion.method = "logistic";
  EXPECT_EQ(run_directory(fusion), std::filesystem::path("runs/hcrl_sa/fusion_logistic"));
  // The default inputs named explicitly are still the default run.
  fusion.fusion.classifier_path = "runs/hcrl_sa/student_curriculum_kd/";
  fusion.fusion.autoencoder_path = "runs/hcrl_sa/student_autoencoder_kd/best.pt";
  EXPECT_EQ(run_directory(fusion), std::filesystem::path("runs/hcrl_sa/fusion_logistic"));
  fusion.fusion.method = "dqn";
  fusion.fusion.classifier_path = "runs/hcrl_sa/teacher_curriculum";
  fusion.fusion.autoencoder_path = "runs/hcrl_sa/teacher_autoencoder/best.pt";
  EXPECT_EQ(
      run_directory(fusion),
      std::filesystem::path("runs/hcrl_sa/fusion_dqn_teacher_curriculum+teacher_autoencoder"));
  // A name that cannot go into a path as it is.
  fusion.fusion.classifier_path = "runs/x/my model\n";
  EXPECT_EQ(run_directory(fusion).filename(), "fusion_dqn_my_model_+teacher_autoencoder");
}

}  // namespace
}  // namespace headroom::train
