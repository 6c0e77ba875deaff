// The training step of any graph-training stage, prepared but not trained: the dispatch from a
// stage to its own preparation (prepared_stage_step.hpp says what is prepared).
#pragma once

#include <memory>

#include "headroom/train/config/training_config.hpp"
#include "headroom/train/stages/prepared_stage_step.hpp"

namespace headroom::train {

// For stages `normal` and `curriculum` (classifier_stage.hpp) and `autoencoder`
// (autoencoder_stage.hpp). Validates `config` (a copy is kept) and creates its run directory.
// Throws std::invalid_argument for stage `evaluation`.
std::unique_ptr<PreparedStageStep> prepare_stage_step(const TrainingConfig& config);

}  // namespace headroom::train
