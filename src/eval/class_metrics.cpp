#include "headroom/eval/class_metrics.hpp"

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace headroom::eval {

ClassMetrics class_metrics(std::span<const std::int32_t> labels,
                           std::span<const std::int32_t> predictions, std::size_t num_classes) {
  if (labels.size() != predictions.size())
    throw std::invalid_argument("class metrics: " + std::to_string(labels.size()) + " labels but " +
                                std::to_string(predictions.size()) + " predictions");
  std::vector<std::size_t> true_positive(num_classes), labelled(num_classes),
      predicted(num_classes);
  const auto check = [num_classes](std::int32_t id) {
    if (id < 0 || static_cast<std::size_t>(id) >= num_classes)
      throw std::invalid_argument("class metrics: class id " + std::to_string(id) +
                                  " outside [0, " + std::to_string(num_classes) + ")");
    return static_cast<std::size_t>(id);
  };
  ClassMetrics metrics;
  metrics.count = labels.size();
  std::size_t correct = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const auto label = check(labels[i]);
    const auto prediction = check(predictions[i]);
    ++labelled[label];
    ++predicted[prediction];
    if (label == prediction) {
      ++true_positive[label];
      ++correct;
    }
  }
  metrics.accuracy = labels.empty() ? 0.0 : static_cast<double>(correct) / labels.size();
  metrics.f1_per_class.assign(num_classes, 0.0);
  std::size_t classes_seen = 0;
  double f1_sum = 0;
  for (std::size_t c = 0; c < num_classes; ++c) {
    if (labelled[c] + predicted[c] == 0) continue;
    ++classes_seen;
    // F1 = 2 TP / (2 TP + FP + FN) = 2 TP / (labelled + predicted).
    metrics.f1_per_class[c] = 2.0 * static_cast<double>(true_positive[c]) /
                              static_cast<double>(labelled[c] + predicted[c]);
    f1_sum += metrics.f1_per_class[c];
  }
  metrics.macro_f1 = classes_seen == 0 ? 0.0 : f1_sum / static_cast<double>(classes_seen);
  return metrics;
}

void to_json(nlohmann::json& json, const ClassMetrics& metrics) {
  json = {{"count", metrics.count},
          {"accuracy", metrics.accuracy},
          {"macro_f1", metrics.macro_f1},
          {"f1_per_class", metrics.f1_per_class}};
}

}  // namespace headroom::eval
