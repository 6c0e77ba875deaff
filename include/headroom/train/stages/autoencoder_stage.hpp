// Stage `autoencoder`: trains the VGAE on the normal (attack-free) training graphs; validation
// loss over the normal validation graphs. With distillation, a student VGAE learns from a frozen
// teacher VGAE: its latent (through a jointly trained linear projection) and its reconstruction.
#pragma once

#include <memory>

#include "headroom/train/config/training_config.hpp"
#include "headroom/train/loop/stage_result.hpp"
#include "headroom/train/loop/training_loop.hpp"
#include "headroom/train/stages/prepared_stage.hpp"
#include "headroom/train/stages/stage_definition.hpp"

namespace headroom::train {

// `hooks` reach into its epoch loop (training_loop.hpp): extra metrics sinks, the gradient hook.
// Stage `autoencoder`: an autoencoder family (the VGAE) on the normal training graphs.
extern const StageTraits kAutoencoderStage;
extern const StageDefinition kAutoencoderStageDefinition;

StageResult run_autoencoder_stage(const TrainingConfig& config, const LoopHooks& hooks = {});

// The stage's step prepared but not trained (prepared_stage.hpp).
std::unique_ptr<PreparedStage> prepare_autoencoder_stage(const TrainingConfig& config);

}  // namespace headroom::train
