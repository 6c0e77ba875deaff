// The VGAE's layers, layer by layer, from its configuration: one plan that the model builds
// (vgae.cpp), the static memory estimate sizes (memory/static_peak_estimate.cpp) and the tests
// count, so that they cannot disagree. Plain data, no torch.
#pragma once

#include <cstdint>
#include <vector>

#include "headroom/models/model_config.hpp"

namespace headroom::models {

// One GATConv: `heads` heads of `channels` channels each, concatenated.
struct GatLayerShape {
  std::int64_t in = 0;
  std::int64_t channels = 0;  // per head
  std::int64_t heads = 1;
  std::int64_t out() const { return channels * heads; }
};

struct VgaeLayerPlan {
  std::int64_t input = 0;               // embedding_dim + in_features - 1
  std::vector<GatLayerShape> encoder;   // each followed by BatchNorm, ReLU, dropout
  std::int64_t encoded = 0;             // width into mu and log sigma^2
  std::vector<GatLayerShape> decoder;   // blocks like the encoder's
  GatLayerShape reconstruction;         // the last GATConv, to in_features - 1, then sigmoid
  std::vector<std::int64_t> neighbour;  // hidden widths of the neighbourhood MLP (ReLU each)
  bool neighbour_dropout = false;       // dropout after each of its hidden layers
  bool kl_mean_over_elements = true;    // else: summed over the latent dimensions
};

// Throws std::invalid_argument naming the field when the configuration cannot be laid out
// (no encoder layer, a width that its heads do not divide, non-positive sizes).
VgaeLayerPlan vgae_layer_plan(const VgaeConfig& config);

}  // namespace headroom::models
