// Stages `normal` and `curriculum`: train a graph classifier of any classifier family (GAT, GCN;
// model_family.hpp). `normal` trains on
// every training graph each epoch; `curriculum` on all attack graphs plus hard normal graphs
// chosen by a trained VGAE's reconstruction score (curriculum.hpp). With distillation, a student
// learns from a frozen classifier teacher's softened logits.
#pragma once

#include <memory>

#include "headroom/train/config/training_config.hpp"
#include "headroom/train/loop/stage_result.hpp"
#include "headroom/train/loop/training_loop.hpp"
#include "headroom/train/stages/prepared_stage.hpp"
#include "headroom/train/stages/stage_definition.hpp"

namespace headroom::train {

// `hooks` reach into its epoch loop (training_loop.hpp): extra metrics sinks, the gradient hook.
// Stage `normal`: a classifier family on every training graph (supervised). Stage `curriculum`:
// the same, with the normal graphs joining by the autoencoder's difficulty score, epoch by epoch.
extern const StageTraits kNormalStage;
extern const StageTraits kCurriculumStage;
extern const StageDefinition kNormalStageDefinition;
extern const StageDefinition kCurriculumStageDefinition;

StageResult run_classifier_stage(const TrainingConfig& config, const LoopHooks& hooks = {});

// The stage's step prepared but not trained (prepared_stage.hpp).
std::unique_ptr<PreparedStage> prepare_classifier_stage(const TrainingConfig& config);

}  // namespace headroom::train
