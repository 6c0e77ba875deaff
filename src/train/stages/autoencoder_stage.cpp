#include "headroom/train/stages/autoencoder_stage.hpp"

#include "autoencoder_task.hpp"
#include "graph_task.hpp"
#include "headroom/train/task/task_driver.hpp"

namespace headroom::train {

std::unique_ptr<PreparedStage> prepare_autoencoder_stage(const TrainingConfig& config) {
  return detail::prepare_graph_task(config, [](const TrainingConfig& prepared) {
    return std::make_unique<detail::AutoencoderTask>(prepared);
  });
}

StageResult run_autoencoder_stage(const TrainingConfig& config, const LoopHooks& hooks) {
  validate(config);
  detail::AutoencoderTask task(config);
  return drive_task(config, task, hooks);
}

const StageTraits kAutoencoderStage{
    .name = "autoencoder",
    .default_preset = "vgae,teacher",
    .reads = {.model = true, .training = true, .optimiser = true, .distillation = true},
    .run_directory_name = model_stage_directory_name,
    .validate =
        [](const TrainingConfig& config) {
          validate_model_stage(config, FamilyRole::kAutoencoder);
        },
};

const StageDefinition kAutoencoderStageDefinition{
    .traits = &kAutoencoderStage,
    .run = run_autoencoder_stage,
    .prepare = prepare_autoencoder_stage,
    .example =
        "Example: headroom autoencoder --store stores/hcrl_sa --preset vgae,teacher\n"
        "         headroom autoencoder --store stores/hcrl_sa --preset vgae,student "
        "--use-kd true --teacher-path runs/hcrl_sa/teacher_autoencoder",
};

}  // namespace headroom::train
