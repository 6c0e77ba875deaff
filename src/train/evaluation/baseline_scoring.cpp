#include "baseline_scoring.hpp"

#include <fmt/format.h>

#include "decision_rules.hpp"
#include "headroom/train/evaluation/baseline_model.hpp"
#include "headroom/train/fusion/fusion_scoring.hpp"

namespace headroom::train::detail {

const baseline::StoreBaseline* SharedBaseline::scores() {
  if (tried_) return scores_ ? &*scores_ : nullptr;
  tried_ = true;
  try {
    scores_ = baseline::score_store_windows(store_, ids_, baseline_adaptation(config_.evaluation));
  } catch (const baseline::BaselineUnavailable& error) {
    why_ = error.what();
    return nullptr;
  }
  run_.log(
      fmt::format("{}: learnt the inter-arrival times of {} CAN IDs and {} ID transitions from "
                  "the training windows' normal frames",
                  kBaselineModel, scores_->profile.ids(), scores_->profile.transitions()));
  return &*scores_;
}

std::optional<ScoredModel> evaluate_baseline(const TrainingConfig& config, RunDirectory& run,
                                             const store::GraphStore& store,
                                             std::span<const std::uint32_t> ids,
                                             SharedBaseline& shared) {
  const auto* baseline = shared.scores();
  if (baseline == nullptr) {
    run.log(fmt::format("{}: not evaluated: {}", kBaselineModel, shared.why_unavailable()));
    return std::nullopt;
  }
  const auto threshold =
      validation_threshold(config, run, store, ids, baseline->scores, std::string(kBaselineModel));
  if (!threshold) return std::nullopt;
  const auto adaptation = baseline_adaptation(config.evaluation);
  auto vehicle = vehicle_calibration(config);
  vehicle.scores = baseline->calibration_scores;
  vehicle.learned_windows = adaptation.calibration_learned_windows;
  auto label_free = label_free_adaptation(config);
  label_free.scores = baseline->label_free_scores;
  label_free.learned_windows = adaptation.learned_windows;
  auto evaluation = eval::evaluate_scores(store, std::string(kBaselineModel), ids, baseline->scores,
                                          std::nullopt, *threshold, vehicle, label_free);
  evaluation.score = "unknown-ID frames + mean frame surprise / 10 (per-ID timing, ID transitions)";
  return ScoredModel{std::move(evaluation), baseline->scores, baseline->label_free_scores};
}

}  // namespace headroom::train::detail
