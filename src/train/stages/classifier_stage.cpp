#include "headroom/train/stages/classifier_stage.hpp"

#include "classifier_task.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/task/task_driver.hpp"

namespace headroom::train {
namespace {

// The classifier task prepared as drive_task prepares it before its first epoch, but not trained:
// its run directory created and locked, the task opened on it (the teacher loaded), its step's
// inputs built (the curriculum's difficulty scored, the teacher cache filled).
class PreparedClassifierTask final : public PreparedStage {
 public:
  explicit PreparedClassifierTask(const TrainingConfig& config)
      : config_(config),
        task_(config_, config_.stage == kCurriculumStage),
        run_(checked_run_directory(config_), /*echo=*/true, config_.run.when_locked) {
    task_.open(run_);
    task_.prepare_inputs();
  }
  ModelSpec model() const override { return task_.model_spec(); }
  ProbeTarget probe_target() override { return task_.probe_target(); }
  std::vector<std::uint32_t> training_ids() const override { return task_.training_ids(); }

 private:
  TrainingConfig config_;  // what task_ refers to
  detail::ClassifierTask task_;
  RunDirectory run_;  // created once the task has checked the configuration against its store
};

}  // namespace

std::unique_ptr<PreparedStage> prepare_classifier_stage(const TrainingConfig& config) {
  validate(config);
  return std::make_unique<PreparedClassifierTask>(config);
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
