#include "headroom/train/fusion/fusion_features.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "headroom/graph/can_id_vocabulary.hpp"
#include "headroom/store/store_arrays.hpp"
#include "headroom/train/batches/inference_batches.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/loop/training_loop.hpp"
#include "headroom/train/step/losses.hpp"

namespace headroom::train {
namespace {

// Signals 2..9 are scaled against the normal graphs; errors and counts are positive and skewed,
// so they are compared on a log scale.
constexpr std::int64_t kFirstScaled = kReconstructionScore;
constexpr std::int64_t kScaledCount = kUnknownIdShare - kReconstructionScore;
constexpr double kScaledClip = 10.0;

// At most 1,001 evenly spaced order statistics of `values` (the whole sorted list when shorter).
std::vector<float> sorted_quantiles(const at::Tensor& values) {
  const at::Tensor sorted = std::get<0>(values.to(at::kFloat).contiguous().sort());
  const std::int64_t n = sorted.size(0);
  const std::int64_t kept = std::min<std::int64_t>(n, 1001);
  std::vector<float> quantiles;
  for (std::int64_t q = 0; q < kept; ++q)
    quantiles.push_back(sorted[kept == 1 ? 0 : q * (n - 1) / (kept - 1)].item<float>());
  return quantiles;
}

float q99(const std::vector<float>& sorted) {
  return sorted[static_cast<std::size_t>(
      std::lround(0.99 * static_cast<double>(sorted.size() - 1)))];
}

// (log-odds - q99) / spread: 0 at the normal graphs' 99th percentile.
at::Tensor standardised_log_odds(const at::Tensor& signals, const FusionScaling& scaling) {
  return (signals.select(1, kAttackLogOdds).to(at::kDouble) - q99(scaling.normal_log_odds)) /
         scaling.log_odds_spread;
}

at::Tensor log_scale(const at::Tensor& signals) {
  return at::log(signals.slice(1, kFirstScaled, kFirstScaled + kScaledCount).clamp_min(0) + 1e-6);
}

// log(1 + the baseline's score), double [G]: a window's score counts its frames of unknown IDs,
// so it is skewed like the error columns.
at::Tensor log_baseline(const at::Tensor& signals) {
  return at::log1p(signals.select(1, kBaselineSignal).to(at::kDouble).clamp_min(0));
}

struct GraphMeans {
  at::Tensor membership;
  at::Tensor counts;
  std::int64_t graphs;
  at::Tensor mean(const at::Tensor& per_node) const {
    return at::zeros({graphs}, per_node.options()).index_add_(0, membership, per_node) / counts;
  }
  at::Tensor max(const at::Tensor& per_node) const {
    return at::zeros({graphs}, per_node.options())
        .scatter_reduce_(0, membership, per_node, "amax", /*include_self=*/true);
  }
};

at::Tensor batch_signals(models::GraphClassifierImpl& classifier,
                         const LoadedAutoencoder& autoencoder, const loader::GraphBatch& batch) {
  const auto logits = classifier.forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs);
  const at::Tensor probability = attack_probability(logits).to(at::kFloat);
  const at::Tensor logit =
      at::logit(probability.to(at::kDouble).clamp(1e-12, 1 - 1e-12)).clamp(-20, 20).to(at::kFloat);

  const auto evidence = autoencoder.family->evidence(*autoencoder.model, batch);
  const at::Tensor& node_error = evidence.feature_error;

  GraphMeans per_graph{batch.batch.to(at::kLong), {}, batch.num_graphs};
  per_graph.counts = at::zeros({batch.num_graphs}, node_error.options())
                         .index_add_(0, per_graph.membership, at::ones_like(node_error))
                         .clamp_min(1.0);
  const at::Tensor edges =
      at::zeros({batch.num_graphs}, node_error.options())
          .index_add_(0, per_graph.membership.index_select(0, batch.edge_index[0].to(at::kLong)),
                      at::ones({batch.edge_index.size(1)}, node_error.options()));
  const at::Tensor unknown = at::zeros_like(node_error);  // per graph from the store, afterwards
  const at::Tensor log_odds = attack_log_odds(logits).to(at::kFloat);
  return at::stack(
      {probability, logit, evidence.graph_score, per_graph.mean(node_error),
       per_graph.mean(evidence.identity_error), per_graph.mean(evidence.neighbour_error),
       per_graph.max(node_error), per_graph.mean(evidence.latent_divergence), per_graph.counts,
       edges, per_graph.mean(unknown), log_odds},
      1);
}

}  // namespace

at::Tensor fusion_signals(models::GraphClassifierImpl& classifier,
                          const LoadedAutoencoder& autoencoder, const store::GraphStore& store,
                          std::span<const std::uint32_t> graph_ids, std::int64_t batch_size,
                          const c10::Device& device, Precision precision) {
  classifier.eval();
  autoencoder.model->eval();
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> parts;
  for_each_batch(store, graph_ids, batch_size, device, [&](const loader::GraphBatch& batch) {
    AutocastScope autocast(precision, device);
    auto signals = batch_signals(classifier, autoencoder, batch);
    parts.push_back(signals.to(torch::kCPU));  // committed only once the batch is computed
  });
  if (parts.empty()) return at::zeros({0, kFusionSignalCount});
  auto signals = at::cat(parts, 0).contiguous();
  signals.select(1, kUnknownIdShare).copy_(unknown_id_shares(store, graph_ids));
  return signals;
}

at::Tensor unknown_id_shares(const store::GraphStore& store,
                             std::span<const std::uint32_t> graph_ids) {
  const graph::CanIdVocabulary vocabulary(store.metadata().vocabulary);
  std::vector<float> shares;
  shares.reserve(graph_ids.size());
  for (const auto id : graph_ids) {
    const auto can_ids = store.graph(id).node_can_ids;
    const auto unknown = std::count_if(can_ids.begin(), can_ids.end(), [&](std::uint32_t can_id) {
      return can_id == store::arrays::kOutOfVocabularyCanId ||
             vocabulary.index_of(can_id) == vocabulary.out_of_vocabulary_index();
    });
    shares.push_back(
        can_ids.empty() ? 0.0F : static_cast<float>(unknown) / static_cast<float>(can_ids.size()));
  }
  return torch::tensor(shares, torch::kFloat);
}

at::Tensor with_baseline_signal(const at::Tensor& signals, std::span<const float> baseline_scores) {
  if (signals.dim() != 2 || signals.size(1) != kFusionSignalCount ||
      signals.size(0) != static_cast<std::int64_t>(baseline_scores.size()))
    throw std::invalid_argument(
        "with_baseline_signal: one baseline score per row of GNN signals needed");
  const std::vector<float> scores(baseline_scores.begin(), baseline_scores.end());
  return at::cat({signals.to(at::kFloat), torch::tensor(scores, torch::kFloat).unsqueeze(1)}, 1)
      .contiguous();
}

bool has_baseline_signal(const at::Tensor& signals) {
  return signals.size(1) == kFusionSignalCount + 1;
}

FusionScaling FusionScaling::fit(const at::Tensor& signals, std::span<const std::uint8_t> labels) {
  TORCH_CHECK(signals.dim() == 2 &&
                  (signals.size(1) == kFusionSignalCount || has_baseline_signal(signals)) &&
                  signals.size(0) == static_cast<std::int64_t>(labels.size()),
              "FusionScaling::fit: signals must be [labels, ", kFusionSignalCount, "(+1)]");
  std::vector<std::int64_t> normal;
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (labels[i] == 0) normal.push_back(static_cast<std::int64_t>(i));
  if (normal.empty())
    throw std::invalid_argument("no normal graph to scale the fusion's signals against");
  const at::Tensor rows = signals.index_select(0, torch::tensor(normal, torch::kLong));
  const at::Tensor scaled = log_scale(rows).to(at::kDouble);
  FusionScaling scaling;
  const at::Tensor mean = scaled.mean(0);
  const at::Tensor spread = scaled.size(0) > 1 ? scaled.std(0) : at::zeros_like(mean);
  for (std::int64_t i = 0; i < kScaledCount; ++i) {
    scaling.mean.push_back(mean[i].item<double>());
    scaling.spread.push_back(std::max(spread[i].item<double>(), 1e-6));
  }
  scaling.normal_scores = sorted_quantiles(rows.select(1, kReconstructionScore));
  const at::Tensor log_odds = rows.select(1, kAttackLogOdds);
  scaling.normal_log_odds = sorted_quantiles(log_odds);
  scaling.log_odds_spread =
      std::max(log_odds.size(0) > 1 ? log_odds.to(at::kDouble).std().item<double>() : 0.0, 1e-3);
  if (has_baseline_signal(rows)) {
    const at::Tensor baseline = log_baseline(rows);
    scaling.baseline_mean = baseline.mean().item<double>();
    scaling.baseline_spread =
        std::max(baseline.size(0) > 1 ? baseline.std().item<double>() : 0.0, 1e-6);
  }
  return scaling;
}

void to_json(nlohmann::json& json, const FusionScaling& s) {
  json = {{"mean", s.mean}, {"spread", s.spread}, {"normal_scores", s.normal_scores}};
  if (!s.normal_log_odds.empty()) {
    json["normal_log_odds"] = s.normal_log_odds;
    json["log_odds_spread"] = s.log_odds_spread;
  }
  if (s.has_baseline()) {
    json["baseline_mean"] = s.baseline_mean;
    json["baseline_spread"] = s.baseline_spread;
  }
}

void from_json(const nlohmann::json& json, FusionScaling& s) {
  json.at("mean").get_to(s.mean);
  json.at("spread").get_to(s.spread);
  json.at("normal_scores").get_to(s.normal_scores);
  s.normal_log_odds = json.value("normal_log_odds", std::vector<float>{});
  s.log_odds_spread = json.value("log_odds_spread", 1.0);
  s.baseline_mean = json.value("baseline_mean", 0.0);
  s.baseline_spread = json.value("baseline_spread", 0.0);
  if (!(s.baseline_spread >= 0)) throw std::invalid_argument("fusion scaling: negative spread");
  if (s.mean.size() != kScaledCount || s.spread.size() != kScaledCount || s.normal_scores.empty())
    throw std::invalid_argument("fusion scaling: wrong number of values");
}

at::Tensor anomaly_levels(const at::Tensor& signals, const FusionScaling& scaling) {
  // sigmoid((log score - log q99) / spread): 0.5 at the normal graphs' 99th percentile, rising
  // with the spread of their log scores, so that nearly every normal graph lies below 0.5.
  const at::Tensor scores = signals.select(1, kReconstructionScore).to(at::kDouble);
  const at::Tensor log_ratio =
      at::log(scores.clamp_min(0) + 1e-6) - std::log(q99(scaling.normal_scores) + 1e-6);
  return at::sigmoid(log_ratio / scaling.spread[0]).to(at::kFloat);
}

at::Tensor attack_levels(const at::Tensor& signals, const FusionScaling& scaling) {
  if (scaling.normal_log_odds.empty())
    return signals.select(1, kAttackProbability).to(at::kFloat).contiguous();
  return at::sigmoid(standardised_log_odds(signals, scaling)).to(at::kFloat);
}

at::Tensor fusion_states(const at::Tensor& signals, const FusionScaling& scaling) {
  const at::Tensor p = attack_levels(signals, scaling);
  const at::Tensor logit =
      scaling.normal_log_odds.empty()
          ? signals.select(1, kAttackLogit).to(at::kFloat) / 20.0
          : (standardised_log_odds(signals, scaling).clamp(-kScaledClip, kScaledClip) / kScaledClip)
                .to(at::kFloat);
  const at::Tensor a = anomaly_levels(signals, scaling);
  const at::Tensor mean = torch::tensor(scaling.mean, torch::kDouble);
  const at::Tensor spread = torch::tensor(scaling.spread, torch::kDouble);
  const at::Tensor scaled = ((log_scale(signals).to(at::kDouble) - mean) / spread)
                                .clamp(-kScaledClip, kScaledClip)
                                .to(at::kFloat);
  const at::Tensor unknown = signals.select(1, kUnknownIdShare).to(at::kFloat);
  std::vector<at::Tensor> parts = {at::stack({p, logit, (2 * p - 1).abs(), a}, 1), scaled,
                                   at::stack({unknown, p - a, p * a}, 1)};
  if (has_baseline_signal(signals)) {
    if (!scaling.has_baseline())
      throw std::invalid_argument(
          "fusion states: the signals carry the baseline's score, the scaling has no statistics "
          "of it");
    parts.push_back(((log_baseline(signals) - scaling.baseline_mean) / scaling.baseline_spread)
                        .clamp(-kScaledClip, kScaledClip)
                        .to(at::kFloat)
                        .unsqueeze(1));
  }
  auto state = at::cat(parts, 1);
  TORCH_INTERNAL_ASSERT(state.size(1) ==
                        (has_baseline_signal(signals) ? kHybridFusionStateSize : kFusionStateSize));
  return state.contiguous();
}

}  // namespace headroom::train
