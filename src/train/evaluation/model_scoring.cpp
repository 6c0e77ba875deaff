#include "model_scoring.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>
#include <vector>

#include "decision_rules.hpp"
#include "headroom/eval/decision_threshold.hpp"
#include "headroom/train/batches/batch_sizing.hpp"
#include "headroom/train/batches/inference_batching.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/loop/run_resume.hpp"
#include "headroom/train/stages/batch_norm_adaptation.hpp"
#include "headroom/train/stages/graph_scores.hpp"
#include "headroom/train/stages/node_anomaly.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::train::detail {
namespace {

// A classifier's attack log-odds, decided at even odds (P(attack) 0.5) and at the threshold its
// stage calibrated (stored as a probability).
std::optional<ScoredModel> evaluate_classifier(
    const TrainingConfig& config, const RunContext& context, const store::GraphStore& store,
    std::span<const std::uint32_t> ids, const std::filesystem::path& checkpoint, std::string name) {
  CheckpointInfo info;
  auto model = load_classifier_checkpoint(checkpoint, context.device, &info);
  require_store_inputs(info.model_config, store, checkpoint);
  InferenceBatching plan;
  const auto scores =
      attack_log_odds_per_graph(*model, store, ids, inference_limits(config, context),
                                context.device, context.precision, &plan);
  std::optional<double> threshold;
  if (info.decision) threshold = eval::log_odds_of_probability(info.decision->threshold);
  auto evaluation =
      eval::evaluate_scores(store, std::move(name), ids, scores, threshold, kEvenOdds,
                            vehicle_calibration(config), label_free_adaptation(config));
  evaluation.score = "attack log-odds";
  return ScoredModel{std::move(evaluation), scores, {}, std::move(plan.info)};
}

// `scores` with each label-free test file's graphs scored again after the autoencoder's BatchNorm
// statistics were re-estimated on the file's first `learned` adaptation windows (of `windows`,
// labels unread; batch_norm_adaptation.hpp), and put back afterwards.
std::vector<float> batch_norm_adapted_scores(
    const LoadedAutoencoder& autoencoder, const store::GraphStore& store,
    std::span<const std::uint32_t> ids, std::vector<float> scores, std::size_t windows,
    std::size_t learned, std::int64_t batch, const RunContext& context,
    const std::function<std::vector<float>(std::span<const std::uint32_t>)>& score_graphs) {
  const auto file_of = store.size_index().file;
  const BatchNormStatistics trained(*autoencoder.model);
  if (trained.layers() == 0) return scores;
  for (const auto& [file, adaptation] : eval::label_free_adaptation_windows(store, ids, windows)) {
    std::vector<std::size_t> rows;
    std::vector<std::uint32_t> graphs;
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (file_of[ids[i]] == file) {
        rows.push_back(i);
        graphs.push_back(ids[i]);
      }
    adapt_batch_norm(autoencoder, store, std::span(adaptation).first(learned), batch,
                     context.device, context.precision);
    const auto file_scores = score_graphs(graphs);
    trained.restore(*autoencoder.model);
    for (std::size_t k = 0; k < rows.size(); ++k) scores[rows[k]] = file_scores[k];
  }
  return scores;
}

// An autoencoder as a detector: its anomaly score per graph (AutoencoderFamily::graph_scores; the
// VGAE's is its reconstruction error, train/step/losses.hpp, graph_reconstruction_score), decided
// at its validation_threshold.
std::optional<ScoredModel> evaluate_autoencoder(const TrainingConfig& config,
                                                const RunContext& context, RunDirectory& run,
                                                const store::GraphStore& store,
                                                std::span<const std::uint32_t> ids,
                                                const std::filesystem::path& checkpoint,
                                                std::string name) {
  require_store_inputs(read_checkpoint_info(checkpoint).model_config, store, checkpoint);
  const auto autoencoder = load_autoencoder_checkpoint(checkpoint, context.device);
  const auto top_nodes = static_cast<std::size_t>(config.evaluation.anomaly_top_nodes);
  const auto batch = config.optimisation.eval_batch_size;
  const auto limits = inference_limits(config, context);
  std::function<std::vector<float>(std::span<const std::uint32_t>)> score_graphs;
  if (top_nodes == 0) {
    score_graphs = [&](std::span<const std::uint32_t> graphs) {
      return anomaly_scores(autoencoder, store, graphs, limits, context.device, context.precision);
    };
  } else {
    // Node errors are read against the normal validation graphs' nodes of the same identity.
    std::vector<std::uint32_t> normal;
    const auto labels = store.size_index().label;
    for (const auto id : store.validation_ids())
      if (labels[id] == 0) normal.push_back(id);
    if (normal.empty()) {
      run.log(
          fmt::format("{}: not evaluated: no normal validation graph to read node errors "
                      "against (--anomaly-top-nodes 0 scores without them)",
                      util::printable_name(name)));
      return std::nullopt;
    }
    score_graphs = [&, normaliser = fit_node_errors(autoencoder, store, normal, limits,
                                                    context.device, context.precision)](
                       std::span<const std::uint32_t> graphs) {
      return top_node_anomaly_scores(autoencoder, normaliser, store, graphs, top_nodes, limits,
                                     context.device, context.precision);
    };
  }
  const auto scores = score_graphs(ids);
  const auto threshold = validation_threshold(config, run, store, ids, scores, name);
  if (!threshold) return std::nullopt;
  auto label_free = label_free_adaptation(config);
  std::vector<float> adapted;
  if (config.evaluation.label_free_batch_norm && label_free.windows > 0) {
    label_free.learned_windows = label_free.windows / 2;
    adapted = batch_norm_adapted_scores(autoencoder, store, ids, scores, label_free.windows,
                                        label_free.learned_windows, batch, context, score_graphs);
    label_free.scores = adapted;
  }
  auto evaluation = eval::evaluate_scores(store, std::move(name), ids, scores, std::nullopt,
                                          *threshold, vehicle_calibration(config), label_free);
  evaluation.score =
      top_nodes == 0
          ? std::string("anomaly score")
          : fmt::format("anomaly score (mean z of the {} most anomalous nodes)", top_nodes);
  return ScoredModel{std::move(evaluation), scores, std::move(adapted)};
}

// log(p / (1 - p)) of each fused P(attack), p clamped to [1e-12, 1 - 1e-12].
double fused_log_odds(double p) {
  const double clamped = std::clamp(p, 1e-12, 1.0 - 1e-12);
  return std::log(clamped / (1.0 - clamped));
}
std::vector<float> fused_log_odds(std::vector<float> scores) {
  for (auto& score : scores) score = static_cast<float>(fused_log_odds(score));
  return scores;
}

// A fusion's fused P(attack) as log-odds, decided at 0 (P 0.5) and at the threshold its stage
// calibrated. Log-odds because the per-file decisions read the spread of a file's normal windows,
// which P(attack) squeezes against 0 and 1 (docs/detection.md). A hybrid's label-free threshold,
// like the baseline's, is set on the adaptation windows its baseline did not learn. nullopt, with
// the reason in the log, when a hybrid's baseline cannot be computed.
std::optional<ScoredModel> evaluate_fusion(const TrainingConfig& config, const RunContext& context,
                                           RunDirectory& run, const store::GraphStore& store,
                                           std::span<const std::uint32_t> ids,
                                           const std::filesystem::path& checkpoint,
                                           std::string name, SharedScores& shared) {
  const bool hybrid = is_hybrid_fusion(read_checkpoint_info(checkpoint));
  const baseline::StoreBaseline* baseline = hybrid ? shared.baseline.scores() : nullptr;
  if (hybrid && baseline == nullptr) {
    run.log(fmt::format("{}: not evaluated: it reads the classical baseline's scores: {}",
                        util::printable_name(name), shared.baseline.why_unavailable()));
    return std::nullopt;
  }
  auto fused = fused_attack_scores(checkpoint, store, ids, config, context,
                                   {.signals = &shared.fusion_signals, .baseline = baseline});
  const auto scores = fused_log_odds(std::move(fused.scores));
  const auto vehicle_scores = fused_log_odds(std::move(fused.vehicle));
  auto label_free_scores = fused_log_odds(std::move(fused.label_free));
  std::optional<double> threshold;
  if (fused.info.decision) threshold = fused_log_odds(fused.info.decision->threshold);
  auto vehicle = vehicle_calibration(config);
  vehicle.scores = vehicle_scores;
  auto label_free = label_free_adaptation(config);
  label_free.scores = label_free_scores;
  if (hybrid) {
    const auto adaptation = baseline_adaptation(config.evaluation);
    vehicle.learned_windows = adaptation.calibration_learned_windows;
    label_free.learned_windows = adaptation.learned_windows;
  }
  auto evaluation = eval::evaluate_scores(store, std::move(name), ids, scores, threshold, 0.0,
                                          vehicle, label_free);
  evaluation.score = hybrid ? "fused attack log-odds of the two models and the classical baseline"
                            : "fused attack log-odds";
  evaluation.hybrid = hybrid;
  return ScoredModel{std::move(evaluation), scores, std::move(label_free_scores)};
}

}  // namespace

std::optional<ScoredModel> evaluate_model(const TrainingConfig& config, const RunContext& context,
                                          RunDirectory& run, const store::GraphStore& store,
                                          std::span<const std::uint32_t> ids,
                                          const std::filesystem::path& checkpoint, std::string name,
                                          SharedScores& shared) {
  require_trained_on(checkpoint, store::content_identity(store.metadata()), "to be evaluated on");
  const auto kind = read_checkpoint_info(checkpoint).kind;
  if (is_fusion_kind(kind))
    return evaluate_fusion(config, context, run, store, ids, checkpoint, std::move(name), shared);
  if (model_family(kind).role() == FamilyRole::kClassifier)
    return evaluate_classifier(config, context, store, ids, checkpoint, std::move(name));
  return evaluate_autoencoder(config, context, run, store, ids, checkpoint, std::move(name));
}

}  // namespace headroom::train::detail
