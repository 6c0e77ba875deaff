#include "headroom/train/stages/node_classifier_stage.hpp"

#include <fmt/format.h>
#include <stdexcept>

#include "headroom/models/node_model_kind.hpp"
#include "headroom/train/stages/node_task.hpp"
#include "headroom/train/task/task_driver.hpp"

namespace headroom::train {

void apply_node_task_defaults(TrainingConfig& config, const NodeDefaultsGiven& given) {
  config.stage = kNodeStage;
  if (!given.preset) config.model.family = "gcn";
  if (!given.max_epochs) config.optimisation.max_epochs = 200;
  if (!given.weight_decay) config.optimisation.weight_decay = 0;
  if (!given.gradient_clip) config.optimisation.gradient_clip = 0;
}

NodeStageResult run_node_classifier_stage(const TrainingConfig& config, const LoopHooks& hooks) {
  validate(config);
  NodeTask task(config);
  const auto trained = drive_task(config, task, hooks);
  return task.result(trained);
}

namespace {
void validate_node_stage(const TrainingConfig& config) {
  try {
    models::node_model_kind(config.model.family);
  } catch (const std::invalid_argument& error) {
    throw std::invalid_argument(fmt::format(
        "stage node trains a node model (--node-model; plan: --preset): {}", error.what()));
  }
  if (config.distillation.enabled)
    throw std::invalid_argument("--use-kd is not available for stage node");
}
}  // namespace

const StageTraits kNodeStage{
    .name = "node",
    .default_preset = "gcn",
    .reads = {.model = true, .training = true, .optimiser = true},
    .run_directory_name =
        [](const TrainingConfig& config) { return "node_" + config.model.family; },
    .validate = validate_node_stage,
    .default_learning_rate =
        [](const TrainingConfig& config) {
          return models::node_model_kind(config.model.family).default_learning_rate();
        },
};

const StageDefinition kNodeStageDefinition{
    .traits = &kNodeStage,
    .run = [](const TrainingConfig& config,
              const LoopHooks& hooks) { return run_node_classifier_stage(config, hooks).training; },
};

}  // namespace headroom::train
