// The training step a stage will run, prepared exactly as the stage prepares it before its first
// epoch — model built from the configuration, teacher loaded, teacher output cache filled in the
// run directory, curriculum difficulty scored — but not trained. What the memory benchmarks and
// tests measure the planner against, so that they probe the step the stage really runs (for a
// distilled student: the distillation loss with its cached teacher outputs).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "headroom/train/batches/batch_sizing.hpp"
#include "headroom/train/families/model_family.hpp"

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

}  // namespace headroom::train
