#include "headroom/train/stages/classifier_stage.hpp"

#include "classifier_task.hpp"
#include "graph_task.hpp"
#include "headroom/train/task/task_driver.hpp"

namespace headroom::train {

std::unique_ptr<PreparedStage> prepare_classifier_stage(const TrainingConfig& config) {
  return detail::prepare_graph_task(config, [](const TrainingConfig& prepared) {
    return std::make_unique<detail::ClassifierTask>(prepared, prepared.stage == kCurriculumStage);
  });
}

StageResult run_classifier_stage(const TrainingConfig& config, const LoopHooks& hooks) {
  validate(config);
  detail::ClassifierTask task(config, config.stage == kCurriculumStage);
  return drive_task(config, task, hooks);
}

namespace {
void validate_classifier_stage(const TrainingConfig& config) {
  validate_model_stage(config, FamilyRole::kClassifier);
}
constexpr OptionGroups kNormalReads{
    .model = true, .training = true, .optimiser = true, .distillation = true, .calibration = true};
}  // namespace

const StageTraits kNormalStage{
    .name = "normal",
    .default_preset = "gat,teacher",
    .reads = kNormalReads,
    .run_directory_name = model_stage_directory_name,
    .validate = validate_classifier_stage,
};

const StageTraits kCurriculumStage{
    .name = "curriculum",
    .default_preset = "gat,teacher",
    .reads = kNormalReads | OptionGroups{.curriculum = true},
    .run_directory_name = model_stage_directory_name,
    .validate = validate_classifier_stage,
};

const StageDefinition kNormalStageDefinition{
    .traits = &kNormalStage,
    .run = run_classifier_stage,
    .prepare = prepare_classifier_stage,
    .example =
        "Example: headroom normal --store stores/hcrl_sa --preset gat,student --max-epochs 20",
};

const StageDefinition kCurriculumStageDefinition{
    .traits = &kCurriculumStage,
    .run = run_classifier_stage,
    .prepare = prepare_classifier_stage,
    .example =
        "Example: headroom curriculum --store stores/hcrl_sa --preset gat,teacher\n"
        "         headroom curriculum --store stores/hcrl_sa --preset gat,student "
        "--use-kd true --teacher-path runs/hcrl_sa/teacher_curriculum",
};

}  // namespace headroom::train
