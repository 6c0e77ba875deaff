#include "decision_rules.hpp"

#include <fmt/format.h>
#include <stdexcept>
#include <utility>
#include <vector>

#include "headroom/eval/decision_threshold.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::train::detail {

eval::VehicleCalibration vehicle_calibration(const TrainingConfig& config) {
  return {.normal_windows = static_cast<std::size_t>(config.evaluation.vehicle_calibration_windows),
          .target_fpr = config.evaluation.target_fpr,
          .scores = {}};
}

eval::LabelFreeAdaptation label_free_adaptation(const TrainingConfig& config) {
  return {.windows = static_cast<std::size_t>(config.evaluation.label_free_windows),
          .target_fpr = config.evaluation.target_fpr,
          .fence_mads = config.evaluation.label_free_fence_mads,
          .scores = {}};
}

std::optional<double> validation_threshold(const TrainingConfig& config, RunDirectory& run,
                                           const store::GraphStore& store,
                                           std::span<const std::uint32_t> ids,
                                           std::span<const float> scores, const std::string& name) {
  const auto validation = store.validation_ids().size();
  const auto labels = store.size_index().label;
  std::vector<std::uint8_t> validation_labels;
  for (std::size_t i = 0; i < validation; ++i) validation_labels.push_back(labels[ids[i]]);
  const auto validation_scores = scores.first(validation);
  const auto method =
      config.evaluation.calibration == "none" ? "fpr" : config.evaluation.calibration;
  const double target_fpr =
      config.evaluation.calibration == "none" ? 0.01 : config.evaluation.target_fpr;
  for (const auto& [m, fpr] : {std::pair<std::string, double>{method, target_fpr}, {"fpr", 0.01}}) {
    try {
      return eval::calibrate_decision(validation_labels, validation_scores, m, fpr).threshold;
    } catch (const std::invalid_argument& error) {
      run.log(fmt::format("{}: no {} threshold ({})", util::printable_name(name), m, error.what()));
    }
  }
  run.log(fmt::format("{}: not evaluated: its validation split gives no threshold",
                      util::printable_name(name)));
  return std::nullopt;
}

}  // namespace headroom::train::detail
