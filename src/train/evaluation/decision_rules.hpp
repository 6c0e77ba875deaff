// How an evaluation decides without a fixed cut: the per-file decisions (a vehicle's own
// calibration windows, label-picked; the label-free adaptation windows, with their fence) as the
// configuration sets them, and the threshold of a score that has no cut of its own (an anomaly
// score), chosen on the validation split. Private to the evaluation wing.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "headroom/eval/evaluation_report.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_directory.hpp"

namespace headroom::train::detail {

// The label-picked per-file decision of config.evaluation (--vehicle-calibration, --target-fpr),
// without scores of its own: the model's scores decide.
eval::VehicleCalibration vehicle_calibration(const TrainingConfig& config);

// The label-free per-file decision of config.evaluation (--label-free-windows, --target-fpr,
// --label-free-fence), without scores of its own: the model's scores decide.
eval::LabelFreeAdaptation label_free_adaptation(const TrainingConfig& config);

// A threshold for a score without a fixed cut (an anomaly score), chosen on the validation split
// (the first store.validation_ids().size() of `ids`) by --calibration (the F1-optimal one by
// default; with --calibration none, the 99th percentile of the normal validation graphs' scores).
// A validation split without attacks falls back to that percentile; one without normal graphs
// either cannot calibrate anything: nullopt, with the reason in the log.
std::optional<double> validation_threshold(const TrainingConfig& config, RunDirectory& run,
                                           const store::GraphStore& store,
                                           std::span<const std::uint32_t> ids,
                                           std::span<const float> scores, const std::string& name);

}  // namespace headroom::train::detail
