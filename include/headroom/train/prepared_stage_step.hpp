// The training step a stage will run, prepared exactly as the stage prepares it before its first
// epoch — model built from the configuration, teacher loaded, teacher output cache filled in the
// run directory, curriculum difficulty scored — but not trained. What the memory benchmarks and
// tests measure the planner against, so that they probe the step the stage really runs (for a
// distilled student: the distillation loss with its cached teacher outputs).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "headroom/train/batch_sizing.hpp"
#include "headroom/train/model_family.hpp"
#include "headroom/train/training_config.hpp"

namespace headroom::train {

// Owns the prepared stage (store, run directory, teacher cache); not thread-safe.
class PreparedStageStep {
 public:
  virtual ~PreparedStageStep() = default;
  // The trained model's family and resolved configuration.
  virtual ModelSpec model() const = 0;
  // The stage's step for the memory probe. Its subject factory refers to this object: use it only
  // while this object lives.
  virtual StageStep step() = 0;
  // The graphs the stage trains on in epoch 0, before shuffling (all training graphs for the
  // `normal` stage, the normal ones for `autoencoder`).
  virtual std::vector<std::uint32_t> training_ids() const = 0;
};

// For stages `normal` and `curriculum` (classifier_stage.hpp) and `autoencoder`
// (autoencoder_stage.hpp). Validates `config` (a copy is kept) and creates its run directory.
// Throws std::invalid_argument for stage `evaluation`.
std::unique_ptr<PreparedStageStep> prepare_stage_step(const TrainingConfig& config);

}  // namespace headroom::train
