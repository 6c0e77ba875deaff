// The shapes of the KD-GAT models and the teacher/student presets. Plain data, no torch: the
// planner and the command line use it without the model code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace headroom::models {

enum class ModelKind { kGat, kVgae };
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

// VGAE (upstream GraphAutoencoderNeighborhood). Layer i of the encoder has hidden[i] channels in
// total (heads x hidden[i]/heads, concatenated); the decoder mirrors it.
struct VgaeConfig {
  std::int64_t num_ids = 0;
  std::int64_t in_features = 11;
  std::int64_t embedding_dim = 32;
  std::vector<std::int64_t> hidden = {480, 240, 48};
  std::int64_t latent = 48;
  std::int64_t heads = 4;
  double dropout = 0.15;
  double logvar_clamp = 20.0;
  bool gradient_checkpointing = true;
};

GatConfig gat_preset(ModelSize size, std::int64_t num_ids);
VgaeConfig vgae_preset(ModelSize size, std::int64_t num_ids);

// "gat"/"vgae", "teacher"/"student"; throws std::invalid_argument naming the bad value.
ModelKind parse_model_kind(const std::string& text);
ModelSize parse_model_size(const std::string& text);
std::string to_string(ModelKind kind);
std::string to_string(ModelSize size);

void to_json(nlohmann::json& json, const GatConfig& config);
void from_json(const nlohmann::json& json, GatConfig& config);
void to_json(nlohmann::json& json, const VgaeConfig& config);
void from_json(const nlohmann::json& json, VgaeConfig& config);

}  // namespace headroom::models
