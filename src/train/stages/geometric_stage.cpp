#include "headroom/train/stages/geometric_stage.hpp"

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "geometric_task.hpp"
#include "headroom/train/task/task_driver.hpp"

namespace headroom::train {

StageResult run_geometric_stage(const TrainingConfig& config, const LoopHooks& hooks) {
  validate(config);
  detail::GeometricTask task(config);
  return drive_task(config, task, hooks);
}

namespace {

// SGMP reads --hidden, --layers (its interactions) and --gradient-checkpointing of the model
// group; a flag it would ignore is refused.
void validate_geometric_stage(const TrainingConfig& config) {
  const auto& m = config.model;
  const auto refuse_if = [](bool given, const char* flag) {
    if (given)
      throw std::invalid_argument(std::string(flag) +
                                  " is not read by stage geometric (SGMP reads --hidden, "
                                  "--layers as its interactions, --gradient-checkpointing)");
  };
  refuse_if(m.heads.has_value(), "--heads");
  refuse_if(m.embedding_dim.has_value(), "--embedding-dim");
  refuse_if(m.fc_layers.has_value(), "--fc-layers");
  refuse_if(m.latent.has_value(), "--latent");
  refuse_if(!m.vgae_hidden.empty(), "--vgae-hidden");
  refuse_if(m.vgae_layout != ModelOptions{}.vgae_layout, "--vgae-layout");
  refuse_if(m.dropout.has_value(), "--dropout");
  if (m.hidden.value_or(1) < 1 || m.layers.value_or(1) < 1)
    throw std::invalid_argument("--hidden and --layers must be at least 1");
}

// config.json names the model the stage trains (the model group's family is not read).
void record_geometric_model(nlohmann::json& json, const TrainingConfig&) { json["model"] = "sgmp"; }

}  // namespace

const StageTraits kGeometricStage{
    .name = "geometric",
    .reads = {.model = true, .training = true, .optimiser = true},
    .run_directory_name = [](const TrainingConfig&) { return std::string("geometric_sgmp"); },
    .validate = validate_geometric_stage,
    .default_learning_rate = [](const TrainingConfig&) { return 1e-3; },
    .record = record_geometric_model,
};

const StageDefinition kGeometricStageDefinition{
    .traits = &kGeometricStage,
    .run = run_geometric_stage,
    .example =
        "Example: headroom generate-trees --out stores/trees\n"
        "         headroom geometric --store stores/trees --max-epochs 20 --batch-size 32",
};

}  // namespace headroom::train
