#include "headroom/models/gcn_classifier.hpp"

#include <torch/torch.h>

#include <stdexcept>
#include <string>

#include "headroom/models/id_embedding.hpp"
#include "headroom/nn/relu_dropout.hpp"
#include "headroom/nn/segment_ops.hpp"

namespace headroom::models {
namespace {

void validate(const GcnConfig& config) {
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("GcnClassifier: " + what);
  };
  require(config.num_ids > 0, "num_ids must be positive");
  require(config.in_features >= 1, "in_features must be at least 1 (the ID column)");
  require(config.embedding_dim > 0, "embedding_dim must be positive");
  require(config.hidden > 0, "hidden must be positive");
  require(config.layers >= 1, "layers must be at least 1");
  require(config.num_classes >= 1, "num_classes must be at least 1");
  require(config.dropout >= 0.0 && config.dropout < 1.0, "dropout must be in [0, 1)");
}

}  // namespace

GcnConfig gcn_preset(ModelSize size, std::int64_t num_ids) {
  GcnConfig config;
  config.num_ids = num_ids;
  if (size == ModelSize::kStudent) {
    config.hidden = 32;
    config.layers = 2;
  }
  return config;
}

void to_json(nlohmann::json& json, const GcnConfig& c) {
  json = {
      {"num_ids", c.num_ids}, {"in_features", c.in_features}, {"embedding_dim", c.embedding_dim},
      {"hidden", c.hidden},   {"layers", c.layers},           {"num_classes", c.num_classes},
      {"dropout", c.dropout}};
}

void from_json(const nlohmann::json& json, GcnConfig& c) {
  c.num_ids = json.at("num_ids").get<std::int64_t>();
  c.in_features = json.at("in_features").get<std::int64_t>();
  c.embedding_dim = json.at("embedding_dim").get<std::int64_t>();
  c.hidden = json.at("hidden").get<std::int64_t>();
  c.layers = json.at("layers").get<std::int64_t>();
  c.num_classes = json.at("num_classes").get<std::int64_t>();
  c.dropout = json.at("dropout").get<double>();
}

GcnClassifierImpl::GcnClassifierImpl(const GcnConfig& config) : config_(config) {
  validate(config_);
  id_embedding_ =
      register_module("id_embedding", torch::nn::Embedding(config_.num_ids, config_.embedding_dim));
  auto convs = register_module("convs", torch::nn::ModuleList());
  auto in = config_.embedding_dim + config_.in_features - 1;
  for (std::int64_t i = 0; i < config_.layers; ++i) {
    convs_.emplace_back(nn::GCNConvOptions{in, config_.hidden, true});
    convs->push_back(convs_.back());
    in = config_.hidden;
  }
  head_ = register_module("head", torch::nn::Linear(config_.hidden, config_.num_classes));
}

at::Tensor GcnClassifierImpl::forward(const at::Tensor& x, const at::Tensor& edge_index,
                                      const at::Tensor& batch, std::int64_t num_graphs) {
  TORCH_CHECK(x.dim() == 2 && x.size(1) == config_.in_features, "GcnClassifier: x must be [N, ",
              config_.in_features, "], got ", x.sizes());
  auto h = embed_ids(id_embedding_, x);
  for (auto& conv : convs_)
    h = nn::relu_dropout(conv->forward(h, edge_index), config_.dropout, is_training());
  return head_->forward(nn::global_mean_pool(h, batch, num_graphs));
}

}  // namespace headroom::models
