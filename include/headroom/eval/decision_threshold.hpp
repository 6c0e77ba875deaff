// Decision thresholds chosen on held-out scores (the validation split, which the model did not
// train on), so that a classifier's decision is calibrated rather than fixed at 0.5. Pure
// functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "headroom/eval/binary_metrics.hpp"

namespace headroom::eval {

// The F1-optimal threshold: over the distinct scores s, the s whose decision (score >= s) has the
// highest F1 (ties: the highest such s, the fewest alarms), placed halfway to the next lower
// distinct score so that the decision keeps a margin on both sides. Returns the midpoint, or s
// itself when no lower score exists. Throws std::invalid_argument without a positive label, or for
// NaN scores or mismatched sizes.
double f1_optimal_threshold(std::span<const std::uint8_t> labels, std::span<const float> scores);

// The lowest threshold whose false-positive rate on the negatives (label 0) is at most
// `target_fpr` (in [0, 1)): just above the (floor(target_fpr x negatives) + 1)-th highest negative
// score. Throws std::invalid_argument without a negative label, or for a target outside [0, 1).
double fpr_threshold(std::span<const std::uint8_t> labels, std::span<const float> scores,
                     double target_fpr);

// A model's calibrated decision, stored with its checkpoint (train/families/model_checkpoint.hpp).
struct DecisionCalibration {
  std::string method;     // "f1" or "fpr"
  double target_fpr = 0;  // the target of method "fpr"
  double threshold = 0.5;
  BinaryMetrics validation;  // on the calibration scores, at `threshold`
};

// Calibrates on `labels`/`scores` by `method` ("f1" or "fpr"). Throws std::invalid_argument for
// another method, and refuses (the same exception, saying why) a threshold that flags every
// calibration window while some are normal: F1-optimal calibration settles there when the scores
// do not separate the classes, and "flag everything" is no decision.
DecisionCalibration calibrate_decision(std::span<const std::uint8_t> labels,
                                       std::span<const float> scores, const std::string& method,
                                       double target_fpr = 0.01);

// A classifier is thresholded on its attack log-odds (train/families/model_family.hpp); its
// calibrated threshold is stored as the P(attack) it equals, so that a checkpoint means the same
// whichever score reads it. The round trip is within 1e-6 for log-odds in ±20 (a double resolves 1
// - P to 1e-16, so the error grows as e^|log-odds|: 1e-3 at ±30); log_odds_of_probability(1) is
// +infinity (nothing is flagged) and of 0 -infinity.
double probability_of_log_odds(double log_odds);
double log_odds_of_probability(double probability);

void to_json(nlohmann::json& json, const DecisionCalibration& calibration);
void from_json(const nlohmann::json& json, DecisionCalibration& calibration);

}  // namespace headroom::eval
