// An autoencoder's anomaly read node by node: each node's reconstruction error (the terms the
// graph score weighs: features + 0.1 x identity) against the errors of nodes of the same identity
// class on normal graphs, and a graph scored by the mean of its k most anomalous nodes. A window
// where a few frames are odd (a handful of injected frames among a hundred) shows there, where
// the mean over all its nodes dilutes it. Both passes run the model in eval mode without
// gradients, batch by batch within --eval-batch-size; not for concurrent use of one model.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "headroom/store/graph_store.hpp"
#include "headroom/train/batches/inference_batching.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/step/precision.hpp"

namespace headroom::train {

// Mean and spread of the node error per identity class (node feature 0), and over all nodes for
// classes seen fewer than twice. Spreads are floored at kMinNodeErrorSpread.
struct NodeErrorNormaliser {
  std::vector<double> mean;
  std::vector<double> spread;
  double overall_mean = 0;
  double overall_spread = 1;
  // (error - mean) / spread of its class, or of all nodes.
  double z(std::int64_t identity, double error) const;
};
inline constexpr double kMinNodeErrorSpread = 1e-6;

// Both passes are batched within `limits` (train/batches/inference_batching.hpp).
// Fits the normaliser on `normal_ids` (graphs known normal: the normal validation graphs). Throws
// std::invalid_argument when they hold fewer than two nodes.
NodeErrorNormaliser fit_node_errors(const LoadedAutoencoder& autoencoder,
                                    const store::GraphStore& store,
                                    std::span<const std::uint32_t> normal_ids,
                                    const InferenceLimits& limits, const c10::Device& device,
                                    Precision precision = Precision::kFloat32);

// Per graph of `graph_ids` (in that order): the mean z of its `top_k` highest-z nodes (all of them
// in a smaller graph; 0 for a graph without nodes).
std::vector<float> top_node_anomaly_scores(const LoadedAutoencoder& autoencoder,
                                           const NodeErrorNormaliser& normaliser,
                                           const store::GraphStore& store,
                                           std::span<const std::uint32_t> graph_ids,
                                           std::size_t top_k, const InferenceLimits& limits,
                                           const c10::Device& device,
                                           Precision precision = Precision::kFloat32);

}  // namespace headroom::train
