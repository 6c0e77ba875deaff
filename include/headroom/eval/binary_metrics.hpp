// Binary classification metrics (attack = positive class), computed from labels and attack scores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace headroom::eval {

struct ConfusionMatrix {
  std::int64_t true_negatives = 0;
  std::int64_t false_positives = 0;
  std::int64_t false_negatives = 0;
  std::int64_t true_positives = 0;
};

struct BinaryMetrics {
  std::int64_t count = 0;
  std::int64_t positives = 0;
  double accuracy = 0;
  double precision = 0;  // 0 when nothing is predicted positive (as scikit-learn's zero_division=0)
  double recall = 0;     // 0 when there are no positives
  double f1 = 0;
  double false_positive_rate = 0;  // FP / negatives; NaN without negatives
  double mcc = 0;      // Matthews correlation; 0 when a row or column of the confusion is empty
  double roc_auc = 0;  // NaN when only one class is present
  double pr_auc = 0;   // average precision (area under precision-recall); NaN without positives
  ConfusionMatrix confusion;
};

// Prediction = score >= threshold. labels are 0/1; scores any real (e.g. P(attack)).
BinaryMetrics binary_metrics(std::span<const std::uint8_t> labels, std::span<const float> scores,
                             double threshold = 0.5);

// Area under the ROC curve by the rank statistic, ties counted half. NaN with a single class.
double roc_auc(std::span<const std::uint8_t> labels, std::span<const float> scores);

// The ROC curve: (false-positive rate, true-positive rate) after each distinct score, highest
// first, from (0, 0) to (1, 1). Longer curves keep `max_points` evenly spaced points (the ends
// included), enough to draw. Empty with a single class.
struct RocCurve {
  std::vector<double> false_positive_rate;
  std::vector<double> true_positive_rate;
};
RocCurve roc_curve(std::span<const std::uint8_t> labels, std::span<const float> scores,
                   std::size_t max_points = 201);

// Average precision, as scikit-learn's average_precision_score: the sum over distinct score
// thresholds, highest first, of (recall gained) x (precision there). NaN without positives.
double average_precision(std::span<const std::uint8_t> labels, std::span<const float> scores);

void to_json(nlohmann::json& json, const BinaryMetrics& metrics);

}  // namespace headroom::eval
