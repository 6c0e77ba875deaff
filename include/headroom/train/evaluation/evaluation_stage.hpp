// Stage `evaluation`: scores the validation split and every test directory with trained
// classifiers, autoencoders and fusions and reports accuracy, precision, recall, F1, ROC AUC and
// the confusion matrix per split and per attack type; writes runs/{dataset}/evaluation/{model}.json
// and prints tables.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "headroom/eval/evaluation_report.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/evaluation/baseline_model.hpp"
#include "headroom/train/stages/stage_definition.hpp"

namespace headroom::train {

struct EvaluationStageResult {
  std::filesystem::path run_dir;
  std::vector<eval::ModelEvaluation> models;
  std::map<std::string, std::int64_t> peak_tensor_bytes;  // by model, of scoring it
};

// Evaluates config.evaluation.models (run directories or checkpoints); when empty, every run
// directory under runs/{dataset}/ with a best.pt. A classifier is scored by its attack
// probability, decided at 0.5 and at its calibrated threshold; a VGAE by its reconstruction error
// as an anomaly score, decided at a threshold calibrated on the validation split
// (config.evaluation.calibration); a fusion (fusion_stage.hpp) by its fused P(attack), decided at
// 0.5 and at its calibrated threshold. Unless config.evaluation.baseline is off, the classical
// baseline is evaluated last, decided like a VGAE. Throws std::runtime_error when there is no
// model.
EvaluationStageResult run_evaluation_stage(const TrainingConfig& config);

// Its definition runs run_evaluation_stage without the job's hooks (evaluation trains nothing).
extern const StageTraits kEvaluationStage;
extern const StageDefinition kEvaluationStageDefinition;

}  // namespace headroom::train
