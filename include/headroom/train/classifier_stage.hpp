// Stages `normal` and `curriculum`: train the GATWithJK graph classifier. `normal` trains on
// every training graph each epoch; `curriculum` on all attack graphs plus hard normal graphs
// chosen by a trained VGAE's reconstruction score (curriculum.hpp). With distillation, a student
// learns from a frozen GAT teacher's softened logits.
#pragma once

#include "headroom/train/stage_result.hpp"
#include "headroom/train/training_config.hpp"

namespace headroom::train {

StageResult run_classifier_stage(const TrainingConfig& config);

}  // namespace headroom::train
