// A stage prepared exactly as it prepares itself before its first epoch — model built from the
// configuration, teacher loaded, teacher output cache filled in the run directory, curriculum
// difficulty scored — but not trained: the step it will run, for the probes. What the memory
// benchmarks and tests measure the planner against, so that they probe the step the stage really
// runs (for a distilled student: the distillation loss with its cached teacher outputs).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "headroom/train/batches/batch_sizing.hpp"
#include "headroom/train/families/model_family.hpp"

namespace headroom::train {

// Owns the prepared stage (store, run directory, teacher cache); not thread-safe.
class PreparedStage {
 public:
  virtual ~PreparedStage() = default;
  // The trained model's family and resolved configuration.
  virtual ModelSpec model() const = 0;
  // The stage's step for the memory probe. Its subject factory refers to this object: use it only
  // while this object lives.
  virtual ProbeTarget probe_target() = 0;
  // The graphs the stage trains on in epoch 0, before shuffling (all training graphs for the
  // `normal` stage, the normal ones for `autoencoder`).
  virtual std::vector<std::uint32_t> training_ids() const = 0;
};

}  // namespace headroom::train
