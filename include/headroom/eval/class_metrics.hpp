// Multi-class metrics of node or document classification: accuracy and macro-F1 (the mean of the
// per-class F1 scores over the classes that occur among the labels or the predictions, as
// scikit-learn's f1_score(average="macro") counts them; a class with no true positive scores 0).
// Plain functions; no torch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace headroom::eval {

struct ClassMetrics {
  std::size_t count = 0;  // examples scored
  double accuracy = 0;
  double macro_f1 = 0;
  std::vector<double> f1_per_class;  // by class id; 0 for a class that never occurs
};

// `labels` and `predictions` are class ids in [0, num_classes), one per example. Throws
// std::invalid_argument for different lengths or an id out of range.
ClassMetrics class_metrics(std::span<const std::int32_t> labels,
                           std::span<const std::int32_t> predictions, std::size_t num_classes);

void to_json(nlohmann::json& json, const ClassMetrics& metrics);

}  // namespace headroom::eval
