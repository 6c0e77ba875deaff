// Stage `fusion`: learns to fuse a trained classifier's P(attack) with a trained VGAE's anomaly
// level per graph (fusion_learner.hpp), upstream's last training stage. Both models are frozen;
// the fusion is fitted on the validation split — graphs neither model trained on — of which
// --fusion-holdout is held out to choose the best epoch (lowest class-balanced BCE of the fused
// score). Run directory runs/{dataset}/fusion_{method}: best.pt (kind fusion-dqn or
// fusion-logistic; the network, the signal scaling, the two models' checkpoints and a decision
// threshold calibrated on the whole validation split), last.pt after every epoch (a killed run
// resumes there and ends as if never interrupted), metrics.jsonl, result.json. The stage is a task
// on the task driver (task/task_driver.hpp), as every trained stage is: src/train/fusion/
// fusion_task.hpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "headroom/store/graph_store.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_context.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/fusion/fusion_scoring.hpp"
#include "headroom/train/loop/stage_result.hpp"
#include "headroom/train/loop/training_loop.hpp"
#include "headroom/train/stages/stage_definition.hpp"

namespace headroom::train {

extern const StageTraits kFusionStage;
extern const StageDefinition kFusionStageDefinition;

// Throws FusionUnavailable (fusion_scoring.hpp) when the store's validation split lacks normal or
// attack graphs, std::runtime_error when a model to fuse is missing.
StageResult run_fusion_stage(const TrainingConfig& config, const LoopHooks& hooks = {});

}  // namespace headroom::train
