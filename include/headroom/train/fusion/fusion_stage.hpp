// Stage `fusion`: learns to fuse a trained classifier's P(attack) with a trained VGAE's anomaly
// level per graph (fusion_learner.hpp), upstream's last training stage. Both models are frozen;
// the fusion is fitted on the validation split — graphs neither model trained on — of which
// --fusion-holdout is held out to choose the best epoch (lowest class-balanced BCE of the fused
// score). Run directory runs/{dataset}/fusion_{method}: best.pt (kind fusion-dqn or
// fusion-logistic; the network, the signal scaling, the two models' checkpoints and a decision
// threshold calibrated on the whole validation split), last.pt after every epoch (a killed run
// resumes there and ends as if never interrupted), metrics.jsonl, result.json.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "headroom/baseline/store_baseline.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_context.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/loop/stage_result.hpp"
#include "headroom/train/loop/training_loop.hpp"
#include "headroom/train/stages/stage_definition.hpp"

namespace headroom::train {

// The store's validation split lacks normal or attack graphs: there is nothing to fit a fusion on.
class FusionUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

extern const StageTraits kFusionStage;
extern const StageDefinition kFusionStageDefinition;

// Throws FusionUnavailable (see above), std::runtime_error when a model to fuse is missing.
StageResult run_fusion_stage(const TrainingConfig& config, const LoopHooks& hooks = {});

// Whether a checkpoint kind is a fusion's.
bool is_fusion_kind(std::string_view kind);
// Whether a fusion checkpoint is a hybrid's (FusionOptions::with_baseline).
bool is_hybrid_fusion(const CheckpointInfo& info);

// How the classical baseline adapts label-free to each test file (baseline::BaselineAdaptation):
// it learns the first half of the file's --label-free-windows, the second half sets the threshold.
// Its own row and the hybrid fusions read the same scores.
baseline::BaselineAdaptation label_free_baseline_adaptation(const EvaluationOptions& evaluation);

// The fused P(attack) of the fusion checkpoint `checkpoint` for `graph_ids`, computed with the
// classifier and VGAE it names, on config.run's device and precision; its info in *info when
// given. With `adapted`, also the scores for the per-file decisions (config.evaluation):
// - `vehicle`, with vehicle calibration on: each calibrated test file's states scaled against that
//   file's calibration windows (eval::vehicle_calibration_windows) instead of the fitting graphs,
//   so that the VGAE's signals of a new vehicle are measured against that vehicle's normal
//   traffic;
// - `label_free`, with label-free adaptation on: the same against each file's first windows
//   whatever their labels (eval::label_free_adaptation_windows), no label read.
// Each is empty where its decision is off.
// A hybrid fusion also reads the baseline's window scores for `graph_ids`: `baseline` when given
// (computed with label_free_baseline_adaptation, for these graph ids; not owned), else computed
// here. Its label-free states read the baseline's label-free scores and are rescaled on the
// adaptation windows the baseline did not learn. Throws baseline::BaselineUnavailable when the
// store's CAN files cannot be read back for a hybrid.
struct FusionAdaptedScores {
  std::vector<float> vehicle;
  std::vector<float> label_free;
};
std::vector<float> fused_attack_scores(const std::filesystem::path& checkpoint,
                                       const store::GraphStore& store,
                                       std::span<const std::uint32_t> graph_ids,
                                       const TrainingConfig& config, const RunContext& context,
                                       CheckpointInfo* info = nullptr,
                                       FusionAdaptedScores* adapted = nullptr,
                                       const baseline::StoreBaseline* baseline = nullptr);

}  // namespace headroom::train
