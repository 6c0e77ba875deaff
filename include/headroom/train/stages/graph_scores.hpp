// Batched inference over store graphs: attack log-odds of a classifier and an autoencoder's
// anomaly scores (the curriculum's difficulty), computed in batches, never graph by graph. With a
// packing budget in `limits` the batches are planned by the scoring pass's measured peak
// (train/batches/inference_batching.hpp); `plan`, when given, receives how.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "headroom/models/graph_classifier.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/batches/inference_batching.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/step/precision.hpp"

namespace headroom::train {

// attack_log_odds per graph (train/families/model_family.hpp), in the order of graph_ids. The model
// is put in eval mode.
std::vector<float> attack_log_odds_per_graph(models::GraphClassifierImpl& model,
                                             const store::GraphStore& store,
                                             std::span<const std::uint32_t> graph_ids,
                                             const InferenceLimits& limits,
                                             const c10::Device& device,
                                             Precision precision = Precision::kFloat32,
                                             InferenceBatching* plan = nullptr);

// An autoencoder's anomaly score per graph (AutoencoderFamily::graph_scores), in the order of
// graph_ids. The model is put in eval mode.
std::vector<float> anomaly_scores(const LoadedAutoencoder& autoencoder,
                                  const store::GraphStore& store,
                                  std::span<const std::uint32_t> graph_ids,
                                  const InferenceLimits& limits, const c10::Device& device,
                                  Precision precision = Precision::kFloat32,
                                  InferenceBatching* plan = nullptr);

}  // namespace headroom::train
