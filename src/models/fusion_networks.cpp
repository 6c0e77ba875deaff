#include "headroom/models/fusion_networks.hpp"

#include <torch/nn/modules/activation.h>

#include <stdexcept>

namespace headroom::models {

void to_json(nlohmann::json& json, const FusionQConfig& c) {
  json = {{"state_size", c.state_size}, {"hidden", c.hidden}, {"actions", c.actions}};
}

void from_json(const nlohmann::json& json, FusionQConfig& c) {
  json.at("state_size").get_to(c.state_size);
  json.at("hidden").get_to(c.hidden);
  json.at("actions").get_to(c.actions);
}

FusionQNetworkImpl::FusionQNetworkImpl(const FusionQConfig& config) : config_(config) {
  if (config.state_size < 1 || config.actions < 2)
    throw std::invalid_argument("fusion Q-network: state_size >= 1 and actions >= 2 needed");
  torch::nn::Sequential layers;
  std::int64_t width = config.state_size;
  for (const auto hidden : config.hidden) {
    if (hidden < 1) throw std::invalid_argument("fusion Q-network: hidden widths must be >= 1");
    layers->push_back(torch::nn::Linear(width, hidden));
    layers->push_back(torch::nn::ReLU());
    width = hidden;
  }
  layers->push_back(torch::nn::Linear(width, config.actions));
  layers_ = register_module("layers", layers);
}

at::Tensor FusionQNetworkImpl::forward(const at::Tensor& states) {
  return layers_->forward(states);
}

at::Tensor fusion_weights(const at::Tensor& actions, std::int64_t action_count) {
  return actions.to(at::kFloat) / static_cast<float>(action_count - 1);
}

LogisticFusionImpl::LogisticFusionImpl(std::int64_t state_size) {
  linear_ = register_module("linear", torch::nn::Linear(state_size, 1));
}

at::Tensor LogisticFusionImpl::forward(const at::Tensor& states) {
  return linear_->forward(states).squeeze(1);
}

}  // namespace headroom::models
