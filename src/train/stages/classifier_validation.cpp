#include "classifier_validation.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "headroom/eval/binary_metrics.hpp"
#include "headroom/eval/decision_threshold.hpp"
#include "headroom/train/batches/batch_sizing.hpp"
#include "headroom/train/batches/sharded_pass.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/stages/graph_scores.hpp"
#include "headroom/util/process_role.hpp"

namespace headroom::train::detail {
namespace {

// One batch's part of the validation, as the ranks exchange it: the loss and the cross-entropy
// summed over its graphs, then each graph's attack log-odds, then each graph's label.
BatchContribution validation_contribution(const loader::GraphBatch& batch,
                                          const ClassifierObjective& objective) {
  at::Tensor logits;
  const auto loss = objective(batch, &logits);
  const auto n = static_cast<double>(batch.num_graphs);
  const auto logits32 = logits.to(torch::kFloat);
  const auto p = attack_log_odds(logits32).to(torch::kCPU, torch::kDouble).contiguous();
  const auto y = batch.y.to(torch::kCPU, torch::kDouble).contiguous();
  BatchContribution contribution = {
      loss.item<double>() * n, torch::cross_entropy_loss(logits32, batch.y).item<double>() * n};
  contribution.insert(contribution.end(), p.data_ptr<double>(), p.data_ptr<double>() + p.numel());
  contribution.insert(contribution.end(), y.data_ptr<double>(), y.data_ptr<double>() + y.numel());
  return contribution;
}

}  // namespace

ValidationResult validate_classifier(const store::GraphStore& store,
                                     std::span<const std::uint32_t> validation_ids,
                                     const InferenceLimits& limits,
                                     std::optional<InferenceBatching>& batching,
                                     const c10::Device& device,
                                     const ClassifierObjective& objective) {
  // The sums are folded in batch order, as one process folds them.
  const auto contributions = contributions_across_ranks(
      store, validation_ids, limits, batching, device,
      [&](const loader::GraphBatch& batch) { return validation_contribution(batch, objective); });
  double loss_sum = 0;
  double ce_sum = 0;
  std::vector<std::uint8_t> labels;
  std::vector<float> scores;
  for (const auto& c : contributions) {
    loss_sum += c[0];
    ce_sum += c[1];
    const auto graphs = (c.size() - 2) / 2;
    for (std::size_t i = 0; i < graphs; ++i) {
      scores.push_back(static_cast<float>(c[2 + i]));
      labels.push_back(static_cast<std::uint8_t>(c[2 + graphs + i]));
    }
  }
  ValidationResult result;
  const auto n = static_cast<double>(std::max<std::size_t>(1, labels.size()));
  result.loss = loss_sum / n;
  // A diverged model's scores are NaN, which no metric takes: the epoch loop stops on this loss,
  // naming it and the epoch (training_loop.cpp), instead of "roc_auc: a score is NaN".
  if (!std::isfinite(result.loss)) return result;
  result.metrics = eval::binary_metrics(labels, scores, kEvenOdds);
  result.metrics["loss"] = result.loss;
  result.metrics["cross_entropy"] = ce_sum / n;
  return result;
}

void calibrate_best_decision(const TrainingConfig& config, const RunContext& context,
                             const store::GraphStore& store,
                             std::span<const std::uint32_t> validation_ids, RunDirectory& run) {
  const auto best = run.path() / "best.pt";
  CheckpointInfo info;
  auto model = load_classifier_checkpoint(best, context.device, &info);
  const auto scores =
      attack_log_odds_per_graph(*model, store, validation_ids, inference_limits(config, context),
                                context.device, context.precision);
  const auto labels = store.size_index().label;
  std::vector<std::uint8_t> validation_labels;
  for (const auto id : validation_ids) validation_labels.push_back(labels[id]);
  try {
    auto decision = eval::calibrate_decision(
        validation_labels, scores, config.evaluation.calibration, config.evaluation.target_fpr);
    const double log_odds = decision.threshold;
    decision.threshold = eval::probability_of_log_odds(log_odds);
    run.log(fmt::format(
        "decision threshold P(attack) {:.6g}, log-odds {:.4g} ({} on {} validation graphs: F1 "
        "{:.4f}, FPR {:.4f}; at 0.5: F1 {:.4f})",
        decision.threshold, log_odds, decision.method, validation_labels.size(),
        decision.validation.f1, decision.validation.false_positive_rate,
        eval::binary_metrics(validation_labels, scores, kEvenOdds).f1));
    if (info.decision && info.decision->method == decision.method &&
        info.decision->threshold == decision.threshold)
      return;
    info.decision = std::move(decision);
  } catch (const std::invalid_argument& error) {
    run.log(fmt::format("decision threshold not calibrated: {}", error.what()));
    if (!info.decision) return;
    info.decision.reset();
  }
  if (util::process_role().writes()) save_model_checkpoint(best, *model, info);
}

}  // namespace headroom::train::detail
