// Evaluation of one model's per-graph attack scores over a store: the validation split, each test
// directory, and each attack type within them; as JSON and as a printed table.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "headroom/eval/binary_metrics.hpp"
#include "headroom/eval/label_free_threshold.hpp"
#include "headroom/store/graph_store.hpp"

namespace headroom::eval {

struct EvaluationGroup {
  std::string split = {};        // "validation" or a test directory name
  std::string attack_type = {};  // "" for the whole split, else one attack type (e.g. "dos")
  // Decision at ModelEvaluation::decision_threshold (0.5). In a group without attack labels,
  // accuracy, precision, recall, F1 and MCC are NaN (undefined), here and in the two below.
  BinaryMetrics metrics = {};
  std::optional<BinaryMetrics> calibrated = {};  // decision at the model's calibrated threshold
  // A test split's graphs other than the vehicle-calibration windows, each decided at its file's
  // own threshold (VehicleCalibration); unset for validation and without vehicle calibration.
  std::optional<BinaryMetrics> vehicle = {};
  std::size_t vehicle_calibration_windows = 0;  // of this group, left out of `vehicle`
  // A test split's graphs other than the label-free adaptation windows, each decided at its file's
  // label-free threshold (LabelFreeAdaptation); unset for validation and without adaptation.
  std::optional<BinaryMetrics> label_free = {};
  // The adaptation windows of this group, and how many of them hold an attack (which the
  // label-free threshold could not know).
  std::size_t adaptation_windows = 0;
  std::size_t adaptation_attack_windows = 0;
  // Whether this attack type occurs in the training files (seen) or only in test files (unseen);
  // unset for whole splits and for normal traffic.
  std::optional<bool> seen_in_training = {};
  RocCurve roc = {};  // of the scores, whatever the threshold (empty with a single class)
};

// Calibration on the vehicle under test: in each test file (one recording of one vehicle), the
// first `normal_windows` normal graphs in time order stand for a short attack-free recording of
// that vehicle — what a deployment on a new car can have, no attack needed. The file's threshold
// is the lowest one that flags at most `target_fpr` of them (fpr_threshold); the file's other
// graphs are decided at it. The labels are used only to pick those normal windows.
struct VehicleCalibration {
  std::size_t normal_windows = 0;  // 0: off
  // The first this many of each file's calibration windows adapted the model itself (a baseline
  // that learnt the vehicle from them): the threshold is set on the others only. All
  // `normal_windows` stay out of the metrics. At most `normal_windows - 1`.
  std::size_t learned_windows = 0;
  double target_fpr = 0.01;
  // Scores for the per-file decisions, one per graph id like evaluate_scores' `scores`; empty:
  // those same scores. A model that adapts its scores to each vehicle (a fusion rescaled on the
  // calibration windows) passes its adapted scores here. Not owned: outlives the call.
  std::span<const float> scores;
};

// Label-free adaptation to the vehicle under test: in each test file, its first `windows` graphs in
// time order, whatever their labels (attacks may be among them), set the file's threshold through
// their scores' robust statistics (label_free_threshold.hpp); the file's other graphs are decided
// at it. No label is read to decide.
struct LabelFreeAdaptation {
  std::size_t windows = 0;  // 0: off
  // The first this many of each file's adaptation windows adapted the model itself (its scores
  // there are in-sample, lower than they would be): the threshold is set on the others only. All
  // `windows` stay out of the metrics. At most `windows - 1`.
  std::size_t learned_windows = 0;
  double target_fpr = 0.01;
  double fence_mads = kDefaultFenceMads;
  // Scores adapted to each file without labels (a fusion rescaled on the adaptation windows), one
  // per graph id like evaluate_scores' `scores`; empty: those same scores. Not owned.
  std::span<const float> scores;
};

// Per test file, its first `windows` graphs among `graph_ids` in store (time) order, ascending,
// whatever their labels. A file with no more graphs than that is absent: nothing would be left to
// judge (its graphs are then outside the label-free metrics, and the coverage says so).
std::map<std::uint32_t, std::vector<std::uint32_t>> label_free_adaptation_windows(
    const store::GraphStore& store, std::span<const std::uint32_t> graph_ids, std::size_t windows);

// Per test file (its index in the store's file list), the graphs among `graph_ids` that vehicle
// calibration sets the file's threshold on: its first `normal_windows` normal graphs in store
// (time) order, ascending. A file with no more normal graphs than that is absent: nothing would be
// left to judge. Validation graphs never count.
std::map<std::uint32_t, std::vector<std::uint32_t>> vehicle_calibration_windows(
    const store::GraphStore& store, std::span<const std::uint32_t> graph_ids,
    std::size_t normal_windows);

struct ModelEvaluation {
  std::string model;  // e.g. "teacher_curriculum"
  // The score's meaning, which the thresholds are on: "attack log-odds" (the stages'
  // classifiers: 0 is P(attack) 0.5), "fused attack log-odds" (fusion: 0 is P 0.5), "anomaly score"
  // (the VGAE's reconstruction error, whose scale has no fixed cut), or by default "attack
  // probability".
  std::string score = "attack probability";
  // A hybrid: its score also reads the classical baseline's (a fusion with --fusion-with-baseline),
  // so it is no measure of what the GNNs alone do.
  bool hybrid = false;
  double decision_threshold = 0.5;  // the decision of `metrics`
  std::optional<double> calibrated_threshold;
  std::map<std::string, double> vehicle_thresholds;     // by test file, with vehicle calibration
  std::map<std::string, double> label_free_thresholds;  // by test file, with label-free adaptation
  std::vector<EvaluationGroup> groups;  // whole splits first, in store order; then attack types
  // What makes a split's numbers unusable, in words: a split with both classes where every window
  // is flagged, or none is (e.g. "test_02: flags every window at 0.5"); a split without a single
  // attack label (whose accuracy, precision, recall, F1 and MCC are NaN: "n/a", JSON null).
  std::vector<std::string> warnings;
};

// `scores[i]` belongs to graph `graph_ids[i]`; graphs are grouped by the store's split and attack
// type records. Validation graphs (store validation ids) form the "validation" split. Decisions at
// `decision_threshold`, at `calibrated_threshold` when given, and with `vehicle` calibration on
// (normal_windows > 0) and with `label_free` adaptation on (windows > 0) at each test file's own
// thresholds.
ModelEvaluation evaluate_scores(const store::GraphStore& store, std::string model,
                                std::span<const std::uint32_t> graph_ids,
                                std::span<const float> scores,
                                std::optional<double> calibrated_threshold = std::nullopt,
                                double decision_threshold = 0.5,
                                const VehicleCalibration& vehicle = {},
                                const LabelFreeAdaptation& label_free = {});

void to_json(nlohmann::json& json, const ModelEvaluation& evaluation);

// A fixed-width table: one row per group (split, attack type, n, accuracy, precision, recall, F1,
// FPR, MCC,
// ROC AUC, PR AUC at 0.5; precision, recall, F1 and FPR at the calibrated threshold), then the
// warnings.
std::string render_table(const ModelEvaluation& evaluation);

}  // namespace headroom::eval
