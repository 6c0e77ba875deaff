#include "headroom/eval/binary_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace headroom::eval {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void check_sizes(std::span<const std::uint8_t> labels, std::span<const float> scores,
                 const char* what) {
  if (labels.size() != scores.size()) {
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(labels.size()) +
                                " labels but " + std::to_string(scores.size()) + " scores");
  }
}

double ratio(std::int64_t numerator, std::int64_t denominator) {
  return denominator == 0 ? 0.0 : static_cast<double>(numerator) / static_cast<double>(denominator);
}

// JSON has no NaN; null marks an undefined metric.
nlohmann::json number_or_null(double value) {
  return std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value);
}

double matthews_correlation(const ConfusionMatrix& c) {
  const auto tp = static_cast<double>(c.true_positives);
  const auto tn = static_cast<double>(c.true_negatives);
  const auto fp = static_cast<double>(c.false_positives);
  const auto fn = static_cast<double>(c.false_negatives);
  const double denominator = std::sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn));
  return denominator == 0 ? 0.0 : (tp * tn - fp * fn) / denominator;
}

}  // namespace

BinaryMetrics binary_metrics(std::span<const std::uint8_t> labels, std::span<const float> scores,
                             double threshold) {
  check_sizes(labels, scores, "binary_metrics");
  BinaryMetrics m;
  ConfusionMatrix& c = m.confusion;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const bool positive = labels[i] != 0;
    const bool predicted = static_cast<double>(scores[i]) >= threshold;
    if (positive) {
      (predicted ? c.true_positives : c.false_negatives) += 1;
    } else {
      (predicted ? c.false_positives : c.true_negatives) += 1;
    }
  }
  m.count = static_cast<std::int64_t>(labels.size());
  m.positives = c.true_positives + c.false_negatives;
  m.accuracy = m.count == 0 ? kNaN : ratio(c.true_positives + c.true_negatives, m.count);
  m.precision = ratio(c.true_positives, c.true_positives + c.false_positives);
  m.recall = ratio(c.true_positives, m.positives);
  m.f1 =
      m.precision + m.recall == 0.0 ? 0.0 : 2.0 * m.precision * m.recall / (m.precision + m.recall);
  const auto negatives = c.true_negatives + c.false_positives;
  m.false_positive_rate = negatives == 0 ? kNaN : ratio(c.false_positives, negatives);
  m.mcc = matthews_correlation(c);
  m.roc_auc = roc_auc(labels, scores);
  m.pr_auc = average_precision(labels, scores);
  return m;
}

double average_precision(std::span<const std::uint8_t> labels, std::span<const float> scores) {
  check_sizes(labels, scores, "average_precision");
  const auto positives = static_cast<double>(
      std::count_if(labels.begin(), labels.end(), [](std::uint8_t l) { return l != 0; }));
  if (positives == 0) return kNaN;
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  double true_positives = 0;
  double previous_recall = 0;
  double area = 0;
  for (std::size_t first = 0; first < order.size();) {
    std::size_t last = first;
    for (; last < order.size() && scores[order[last]] == scores[order[first]]; ++last)
      true_positives += labels[order[last]] != 0 ? 1 : 0;
    const double recall = true_positives / positives;
    area += (recall - previous_recall) * true_positives / static_cast<double>(last);
    previous_recall = recall;
    first = last;
  }
  return area;
}

RocCurve roc_curve(std::span<const std::uint8_t> labels, std::span<const float> scores,
                   std::size_t max_points) {
  check_sizes(labels, scores, "roc_curve");
  const auto positives = static_cast<double>(
      std::count_if(labels.begin(), labels.end(), [](std::uint8_t l) { return l != 0; }));
  const auto negatives = static_cast<double>(labels.size()) - positives;
  RocCurve full;
  if (positives == 0 || negatives == 0) return full;
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  full.false_positive_rate.push_back(0);
  full.true_positive_rate.push_back(0);
  double true_positives = 0, false_positives = 0;
  for (std::size_t first = 0; first < order.size();) {
    std::size_t last = first;
    // Tied scores are decided together: one point for all of them.
    for (; last < order.size() && scores[order[last]] == scores[order[first]]; ++last)
      (labels[order[last]] != 0 ? true_positives : false_positives) += 1;
    full.false_positive_rate.push_back(false_positives / negatives);
    full.true_positive_rate.push_back(true_positives / positives);
    first = last;
  }
  const std::size_t n = full.false_positive_rate.size();
  if (n <= max_points || max_points < 2) return full;
  RocCurve kept;
  for (std::size_t k = 0; k < max_points; ++k) {
    const std::size_t i = k * (n - 1) / (max_points - 1);
    kept.false_positive_rate.push_back(full.false_positive_rate[i]);
    kept.true_positive_rate.push_back(full.true_positive_rate[i]);
  }
  return kept;
}

double roc_auc(std::span<const std::uint8_t> labels, std::span<const float> scores) {
  check_sizes(labels, scores, "roc_auc");
  // NaN breaks the ordering the ranks need; scikit-learn refuses it too.
  if (std::any_of(scores.begin(), scores.end(), [](float s) { return std::isnan(s); })) {
    throw std::invalid_argument("roc_auc: a score is NaN");
  }
  const auto positives = static_cast<std::size_t>(
      std::count_if(labels.begin(), labels.end(), [](std::uint8_t l) { return l != 0; }));
  const std::size_t negatives = labels.size() - positives;
  if (positives == 0 || negatives == 0) return kNaN;

  // Mann-Whitney: AUC = (sum of the positives' ranks - P(P+1)/2) / (P N), where tied scores share
  // the mean of the ranks they span, so every tied positive/negative pair counts one half.
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
  double positive_rank_sum = 0.0;
  for (std::size_t first = 0; first < order.size();) {
    std::size_t last = first + 1;
    while (last < order.size() && scores[order[last]] == scores[order[first]]) ++last;
    // 1-based ranks first+1 .. last; their mean:
    const double rank = (static_cast<double>(first + 1) + static_cast<double>(last)) / 2.0;
    for (std::size_t k = first; k < last; ++k) {
      if (labels[order[k]] != 0) positive_rank_sum += rank;
    }
    first = last;
  }
  const auto p = static_cast<double>(positives);
  const auto n = static_cast<double>(negatives);
  return (positive_rank_sum - p * (p + 1.0) / 2.0) / (p * n);
}

void to_json(nlohmann::json& json, const BinaryMetrics& metrics) {
  const ConfusionMatrix& c = metrics.confusion;
  json = nlohmann::json{
      {"count", metrics.count},
      {"positives", metrics.positives},
      {"accuracy", number_or_null(metrics.accuracy)},
      {"precision", number_or_null(metrics.precision)},
      {"recall", number_or_null(metrics.recall)},
      {"f1", number_or_null(metrics.f1)},
      {"false_positive_rate", number_or_null(metrics.false_positive_rate)},
      {"mcc", number_or_null(metrics.mcc)},
      {"roc_auc", number_or_null(metrics.roc_auc)},
      {"pr_auc", number_or_null(metrics.pr_auc)},
      {"confusion",
       {{"true_negatives", c.true_negatives},
        {"false_positives", c.false_positives},
        {"false_negatives", c.false_negatives},
        {"true_positives", c.true_positives}}},
  };
}

}  // namespace headroom::eval
