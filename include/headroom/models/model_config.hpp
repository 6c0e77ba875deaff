// The shapes of the KD-GAT models and the teacher/student presets. Plain data, no torch: the
// planner and the command line use it without the model code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace headroom::models {

enum class ModelSize { kTeacher, kStudent };

// GATWithJK. Every GATConv has `heads` heads of `hidden` channels, concatenated.
struct GatConfig {
  std::int64_t num_ids = 0;       // CAN-ID vocabulary size + 1 (the out-of-vocabulary index)
  std::int64_t in_features = 11;  // node features; feature 0 is the ID index
  std::int64_t embedding_dim = 16;
  std::int64_t hidden = 48;
  std::int64_t layers = 3;
  std::int64_t heads = 8;
  std::int64_t fc_layers = 2;  // fully connected layers after pooling, the last one -> classes
  std::int64_t num_classes = 2;
  double dropout = 0.2;
  bool gradient_checkpointing = true;
};

// How the VGAE's layers are laid out (vgae_layout.hpp has the layer-by-layer plan).
enum class VgaeLayout {
  // Upstream's GraphAutoencoderNeighborhood, exactly (the default): the encoder's GATConv layers
  // are hidden[0..], the first with `heads` heads and the others with one; mu and log sigma^2 map
  // the last to `latent`; the decoder is one GATConv block of hidden.back() channels in
  // `decoder_heads` heads, then a single-head GATConv to the features; the neighbourhood decoder
  // is latent -> latent -> latent -> num_ids with ReLU and dropout; the KL term is a mean over all
  // latent elements.
  kKdGat,
  // headroom's first VGAE, kept for its checkpoints: every hidden width is an encoder layer of
  // `heads` heads, the decoder mirrors the whole encoder, the neighbourhood decoder is latent ->
  // hidden.back() -> num_ids, and the KL term sums over the latent dimensions.
  kMirrored,
};

// VGAE (upstream GraphAutoencoderNeighborhood). Layer widths are totals over the heads
// (heads x width/heads channels, concatenated).
struct VgaeConfig {
  std::int64_t num_ids = 0;
  std::int64_t in_features = 11;
  std::int64_t embedding_dim = 32;
  std::vector<std::int64_t> hidden = {480, 240};  // encoder layers
  std::int64_t latent = 48;
  std::int64_t heads = 4;          // first encoder layer (kd-gat) or every layer (mirrored)
  std::int64_t decoder_heads = 4;  // the decoder's hidden block (kd-gat)
  double dropout = 0.15;
  double logvar_clamp = 20.0;
  bool gradient_checkpointing = true;
  VgaeLayout layout = VgaeLayout::kKdGat;
};

GatConfig gat_preset(ModelSize size, std::int64_t num_ids);
VgaeConfig vgae_preset(ModelSize size, std::int64_t num_ids);

// "teacher"/"student"; throws std::invalid_argument naming the bad value. (Model kinds are the
// training area's model families: train/families/model_family.hpp.)
ModelSize parse_model_size(const std::string& text);
std::string to_string(ModelSize size);
std::string to_string(VgaeLayout layout);
// "kd-gat" or "mirrored"; throws std::invalid_argument naming the bad value.
VgaeLayout parse_vgae_layout(const std::string& text);

void to_json(nlohmann::json& json, const GatConfig& config);
void from_json(const nlohmann::json& json, GatConfig& config);
void to_json(nlohmann::json& json, const VgaeConfig& config);
void from_json(const nlohmann::json& json, VgaeConfig& config);

}  // namespace headroom::models
