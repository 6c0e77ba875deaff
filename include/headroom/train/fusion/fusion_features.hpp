// What a fusion of a graph classifier and a VGAE sees of each graph. Signals are the raw per-graph
// outputs of both models (fusion_signals); the state is those signals scaled against the normal
// graphs the fusion was fitted on (FusionScaling), plus the two scores that get fused:
// p, the classifier's attack level, and a, the VGAE's anomaly level, both in (0, 1) and both 0.5
// at the 99th percentile of the normal fitting graphs (attack_levels, anomaly_levels). The attack
// level is read from the attack log-odds, not from P(attack): P(attack) is exactly 1 in float32
// once the logits are ~17 apart, which on a vehicle not seen in training ties its normal windows
// with its attacks (docs/detection.md), so rescaling on that vehicle's normal windows could not
// separate them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <ATen/Tensor.h>
#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include "headroom/models/graph_classifier.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/step/precision.hpp"

namespace headroom::train {

// Columns of fusion_signals.
enum FusionSignal : std::int64_t {
  kAttackProbability,    // the classifier's P(attack)
  kAttackLogit,          // logit of that probability, clamped to +-20
  kReconstructionScore,  // the autoencoder's anomaly score (AutoencoderFamily::graph_scores)
  // Means over nodes of the autoencoder's error terms (AutoencoderEvidence; the VGAE's: squared
  // feature error, ID cross-entropy, neighbourhood BCE, KL over the latent dimensions), and the
  // largest node's feature error.
  kNodeFeatureError,
  kIdError,
  kNeighbourError,
  kWorstNodeError,
  kLatentKl,
  kNodeCount,
  kEdgeCount,
  kUnknownIdShare,  // share of nodes whose CAN ID is out of the vocabulary (unknown_id_shares)
  kAttackLogOdds,   // the classifier's attack log-odds (attack_log_odds), unclamped
  kFusionSignalCount
};

// A hybrid fusion's signals have one more column: the classical baseline's window score
// (baseline/store_baseline.hpp), appended by with_baseline_signal. The GNN columns keep their
// places, so that everything above reads both kinds alike.
inline constexpr std::int64_t kBaselineSignal = kFusionSignalCount;

// `signals` [G, kFusionSignalCount] with `baseline_scores` (one per row, >= 0) appended as column
// kBaselineSignal. Throws std::invalid_argument when the counts differ.
at::Tensor with_baseline_signal(const at::Tensor& signals, std::span<const float> baseline_scores);
// Whether `signals` carry the baseline's column.
bool has_baseline_signal(const at::Tensor& signals);

// float [graph_ids.size(), kFusionSignalCount] on the CPU, in graph_ids order; both models are put
// in eval mode and run without gradients, batch by batch.
at::Tensor fusion_signals(models::GraphClassifierImpl& classifier,
                          const LoadedAutoencoder& autoencoder, const store::GraphStore& store,
                          std::span<const std::uint32_t> graph_ids, std::int64_t batch_size,
                          const c10::Device& device, Precision precision);

// float [graph_ids.size()]: per graph, the share of its nodes whose CAN ID is outside the store's
// training vocabulary, read from node_can_ids, so that it means the same under every node identity
// (feature 0 is the vocabulary index only under --node-identity can-id).
at::Tensor unknown_id_shares(const store::GraphStore& store,
                             std::span<const std::uint32_t> graph_ids);

// Width of fusion_states: a GNN fusion's, and a hybrid's (one more: the baseline's scaled score).
inline constexpr std::int64_t kFusionStateSize = 15;
inline constexpr std::int64_t kHybridFusionStateSize = kFusionStateSize + 1;

// Location and spread of every signal over the normal graphs of a fitting set (errors and counts
// on a log scale), and the sorted reconstruction scores that define the anomaly level.
struct FusionScaling {
  std::vector<double> mean;
  std::vector<double> spread;        // standard deviation, at least 1e-6
  std::vector<float> normal_scores;  // sorted; at most 1,001 quantiles are kept
  // The same for the attack log-odds, and the spread of the normal graphs' log-odds (at least
  // 1e-3). Empty in a fusion fitted before the attack level existed: its p stays P(attack), and
  // its states are what they were, so that its checkpoint decides as it did.
  std::vector<float> normal_log_odds;
  double log_odds_spread = 1.0;
  // A hybrid fusion's: mean and standard deviation (at least 1e-6) of log(1 + baseline score) over
  // the normal graphs. Zero spread: the signals had no baseline column.
  double baseline_mean = 0.0;
  double baseline_spread = 0.0;
  bool has_baseline() const { return baseline_spread > 0; }

  // Fitted on the rows of `signals` whose label is 0. Throws std::invalid_argument when there are
  // none.
  static FusionScaling fit(const at::Tensor& signals, std::span<const std::uint8_t> labels);
};
void to_json(nlohmann::json& json, const FusionScaling& scaling);
void from_json(const nlohmann::json& json, FusionScaling& scaling);

// a per graph, float [G] in (0, 1): sigmoid((log score - log q99) / s), q99 the 99th percentile
// of the normal scores and s the spread of their logs.
at::Tensor anomaly_levels(const at::Tensor& signals, const FusionScaling& scaling);
// p per graph, float [G] in (0, 1): sigmoid((log-odds - q99) / s), q99 the 99th percentile of
// the normal graphs' attack log-odds and s their spread; P(attack) for a scaling without them.
at::Tensor attack_levels(const at::Tensor& signals, const FusionScaling& scaling);
// float [G, kFusionStateSize]: p, the log-odds scaled as p is (clipped to +-10, / 10; the logit /
// 20 for a scaling without log-odds), |2p - 1|, a, the scaled signals 2..9 (clipped to +-10), the
// unknown-ID share, p - a and p * a; for signals with the baseline's column, [G,
// kHybridFusionStateSize]: the same and log(1 + baseline score) scaled like signals 2..9. Throws
// std::invalid_argument when the signals have the baseline's column and the scaling has not.
at::Tensor fusion_states(const at::Tensor& signals, const FusionScaling& scaling);

}  // namespace headroom::train
