#include "headroom/eval/decision_threshold.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace headroom::eval {
namespace {

void check_inputs(std::span<const std::uint8_t> labels, std::span<const float> scores,
                  const char* what) {
  if (labels.size() != scores.size())
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(labels.size()) +
                                " labels but " + std::to_string(scores.size()) + " scores");
  if (std::any_of(scores.begin(), scores.end(), [](float s) { return std::isnan(s); }))
    throw std::invalid_argument(std::string(what) + ": a score is NaN");
}

double midpoint(float high, float low) {
  return 0.5 * (static_cast<double>(high) + static_cast<double>(low));
}

}  // namespace

double probability_of_log_odds(double log_odds) {
  // The form that does not overflow on either side.
  return log_odds >= 0 ? 1.0 / (1.0 + std::exp(-log_odds))
                       : std::exp(log_odds) / (1.0 + std::exp(log_odds));
}

double log_odds_of_probability(double probability) {
  return std::log(probability) - std::log1p(-probability);
}

double f1_optimal_threshold(std::span<const std::uint8_t> labels, std::span<const float> scores) {
  check_inputs(labels, scores, "f1_optimal_threshold");
  std::vector<std::size_t> order(scores.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  const auto positives = static_cast<double>(
      std::count_if(labels.begin(), labels.end(), [](std::uint8_t l) { return l != 0; }));
  if (positives == 0) throw std::invalid_argument("f1_optimal_threshold: no positive label");
  // Lowering the threshold through the distinct scores, highest first: at each, every graph
  // scoring at least it is flagged. F1 = 2 TP / (flagged + positives).
  double best_f1 = -1;
  std::size_t best_end = 0;  // graphs order[0 .. best_end) are flagged at the best threshold
  double true_positives = 0;
  for (std::size_t first = 0; first < order.size();) {
    std::size_t last = first;
    for (; last < order.size() && scores[order[last]] == scores[order[first]]; ++last)
      true_positives += labels[order[last]] != 0 ? 1 : 0;
    const double f1 = 2 * true_positives / (static_cast<double>(last) + positives);
    if (f1 > best_f1) {
      best_f1 = f1;
      best_end = last;
    }
    first = last;
  }
  const float chosen = scores[order[best_end - 1]];
  return best_end < order.size() ? midpoint(chosen, scores[order[best_end]]) : chosen;
}

double fpr_threshold(std::span<const std::uint8_t> labels, std::span<const float> scores,
                     double target_fpr) {
  check_inputs(labels, scores, "fpr_threshold");
  if (!(target_fpr >= 0 && target_fpr < 1))
    throw std::invalid_argument("fpr_threshold: the target false-positive rate must lie in [0, 1)");
  std::vector<float> negatives;
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (labels[i] == 0) negatives.push_back(scores[i]);
  if (negatives.empty()) throw std::invalid_argument("fpr_threshold: no negative label");
  std::sort(negatives.begin(), negatives.end(), std::greater<>());
  const auto allowed =
      static_cast<std::size_t>(std::floor(target_fpr * static_cast<double>(negatives.size())));
  // Just above the first negative that must not be flagged: ties with it are not flagged either.
  return std::nextafter(static_cast<double>(negatives[allowed]),
                        std::numeric_limits<double>::infinity());
}

DecisionCalibration calibrate_decision(std::span<const std::uint8_t> labels,
                                       std::span<const float> scores, const std::string& method,
                                       double target_fpr) {
  DecisionCalibration calibration;
  calibration.method = method;
  if (method == "f1") {
    calibration.threshold = f1_optimal_threshold(labels, scores);
  } else if (method == "fpr") {
    calibration.target_fpr = target_fpr;
    calibration.threshold = fpr_threshold(labels, scores, target_fpr);
  } else {
    throw std::invalid_argument("calibration method '" + method + "' (expected f1 or fpr)");
  }
  calibration.validation = binary_metrics(labels, scores, calibration.threshold);
  const auto& m = calibration.validation;
  const auto flagged = m.confusion.true_positives + m.confusion.false_positives;
  if (m.count > m.positives && flagged == m.count)
    throw std::invalid_argument(
        "the " + method + " threshold flags every one of the " + std::to_string(m.count) +
        " validation windows, the normal ones too: validation does not separate the classes");
  return calibration;
}

void to_json(nlohmann::json& json, const DecisionCalibration& calibration) {
  json = {{"method", calibration.method},
          {"threshold", calibration.threshold},
          {"validation", calibration.validation}};
  if (calibration.method == "fpr") json["target_fpr"] = calibration.target_fpr;
}

void from_json(const nlohmann::json& json, DecisionCalibration& calibration) {
  json.at("method").get_to(calibration.method);
  json.at("threshold").get_to(calibration.threshold);
  calibration.target_fpr = json.value("target_fpr", 0.0);
}

}  // namespace headroom::eval
