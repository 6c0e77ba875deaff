#include "headroom/models/model_config.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace headroom::models {

GatConfig gat_preset(ModelSize size, std::int64_t num_ids) {
  GatConfig config;
  config.num_ids = num_ids;
  if (size == ModelSize::kTeacher) {
    config.hidden = 48;
    config.layers = 3;
    config.heads = 8;
    config.embedding_dim = 16;
    config.fc_layers = 2;
    config.dropout = 0.2;
  } else {
    config.hidden = 24;
    config.layers = 2;
    config.heads = 4;
    config.embedding_dim = 8;
    config.fc_layers = 3;
    config.dropout = 0.1;
  }
  return config;
}

VgaeConfig vgae_preset(ModelSize size, std::int64_t num_ids) {
  VgaeConfig config;
  config.num_ids = num_ids;
  if (size == ModelSize::kTeacher) {
    config.hidden = {480, 240};
    config.latent = 48;
    config.heads = 4;
    config.embedding_dim = 32;
    config.dropout = 0.15;
  } else {
    config.hidden = {80, 40};
    config.latent = 16;
    config.heads = 1;
    config.embedding_dim = 4;
    config.dropout = 0.1;
  }
  return config;
}

ModelSize parse_model_size(const std::string& text) {
  if (text == "teacher") return ModelSize::kTeacher;
  if (text == "student") return ModelSize::kStudent;
  throw std::invalid_argument("unknown model size '" + text +
                              "' (expected 'teacher' or 'student')");
}

std::string to_string(ModelSize size) {
  return size == ModelSize::kTeacher ? "teacher" : "student";
}

void to_json(nlohmann::json& json, const GatConfig& config) {
  json = nlohmann::json{{"num_ids", config.num_ids},
                        {"in_features", config.in_features},
                        {"embedding_dim", config.embedding_dim},
                        {"hidden", config.hidden},
                        {"layers", config.layers},
                        {"heads", config.heads},
                        {"fc_layers", config.fc_layers},
                        {"num_classes", config.num_classes},
                        {"dropout", config.dropout},
                        {"gradient_checkpointing", config.gradient_checkpointing}};
}

// Every field is required: a configuration stored next to trained weights must describe them
// completely, and a silently defaulted shape would only fail later, at load time.
void from_json(const nlohmann::json& json, GatConfig& config) {
  json.at("num_ids").get_to(config.num_ids);
  json.at("in_features").get_to(config.in_features);
  json.at("embedding_dim").get_to(config.embedding_dim);
  json.at("hidden").get_to(config.hidden);
  json.at("layers").get_to(config.layers);
  json.at("heads").get_to(config.heads);
  json.at("fc_layers").get_to(config.fc_layers);
  json.at("num_classes").get_to(config.num_classes);
  json.at("dropout").get_to(config.dropout);
  json.at("gradient_checkpointing").get_to(config.gradient_checkpointing);
}

void to_json(nlohmann::json& json, const VgaeConfig& config) {
  json = nlohmann::json{{"num_ids", config.num_ids},
                        {"in_features", config.in_features},
                        {"embedding_dim", config.embedding_dim},
                        {"hidden", config.hidden},
                        {"latent", config.latent},
                        {"heads", config.heads},
                        {"decoder_heads", config.decoder_heads},
                        {"layout", to_string(config.layout)},
                        {"dropout", config.dropout},
                        {"logvar_clamp", config.logvar_clamp},
                        {"gradient_checkpointing", config.gradient_checkpointing}};
}

void from_json(const nlohmann::json& json, VgaeConfig& config) {
  json.at("num_ids").get_to(config.num_ids);
  json.at("in_features").get_to(config.in_features);
  json.at("embedding_dim").get_to(config.embedding_dim);
  json.at("hidden").get_to(config.hidden);
  json.at("latent").get_to(config.latent);
  json.at("heads").get_to(config.heads);
  json.at("dropout").get_to(config.dropout);
  json.at("logvar_clamp").get_to(config.logvar_clamp);
  json.at("gradient_checkpointing").get_to(config.gradient_checkpointing);
  // Written before layouts existed: headroom's first, mirrored VGAE.
  config.layout = json.contains("layout") ? parse_vgae_layout(json.at("layout").get<std::string>())
                                          : VgaeLayout::kMirrored;
  config.decoder_heads = json.value("decoder_heads", config.heads);
}

std::string to_string(VgaeLayout layout) {
  return layout == VgaeLayout::kKdGat ? "kd-gat" : "mirrored";
}

VgaeLayout parse_vgae_layout(const std::string& text) {
  if (text == "kd-gat") return VgaeLayout::kKdGat;
  if (text == "mirrored") return VgaeLayout::kMirrored;
  throw std::invalid_argument("unknown VGAE layout '" + text +
                              "' (expected 'kd-gat' or 'mirrored')");
}

}  // namespace headroom::models
