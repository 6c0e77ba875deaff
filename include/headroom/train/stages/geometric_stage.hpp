// Stage `geometric` (issue 48): the SGMP encoder (models/sgmp.hpp) trained, supervised, on a
// geometric store (`headroom generate-trees`, `headroom import-qm9`): classification of the
// graphs' labels when the store has no graph target, regression of its target (QM9's HOMO-LUMO
// gap) when it has one. Batches are --batch-size graphs in the seeded, resumable epoch order;
// the driver's OOM guard and budgets hold them (planning by path counts is to come). At finish,
// evaluation.json in the run directory holds the best checkpoint's validation and test accuracy or
// MAE, each beside a baseline on the same split (the training split's majority class or mean).
// The model group's --hidden and --layers (interactions) size the model; --gradient-checkpointing
// on recomputes each chunk of paths in backward; other model flags are refused.
#pragma once

#include "headroom/train/config/training_config.hpp"
#include "headroom/train/loop/stage_result.hpp"
#include "headroom/train/loop/training_loop.hpp"
#include "headroom/train/stages/stage_definition.hpp"

namespace headroom::train {

extern const StageTraits kGeometricStage;
extern const StageDefinition kGeometricStageDefinition;

// Trains (or resumes, or recognises as complete) and evaluates. Throws std::invalid_argument for
// a model flag SGMP does not read, std::runtime_error naming the store when it has no node
// positions, no training or validation graphs, or (without a target) one class; nothing is
// written then.
StageResult run_geometric_stage(const TrainingConfig& config, const LoopHooks& hooks = {});

}  // namespace headroom::train
