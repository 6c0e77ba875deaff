// The learned parts of score fusion (train/fusion/fusion_learner.hpp): a Q-network that values each
// fusion weight for a graph's state, and a logistic regression from the state to P(attack).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace headroom::models {

struct FusionQConfig {
  std::int64_t state_size = 15;
  std::vector<std::int64_t> hidden = {128, 64};
  // Action k fuses with weight k / (actions - 1) on the classifier: 21 actions, steps of 0.05.
  std::int64_t actions = 21;
};
void to_json(nlohmann::json& json, const FusionQConfig& config);
void from_json(const nlohmann::json& json, FusionQConfig& config);

// state float [G, state_size] -> Q-values [G, actions] (Linear -> ReLU per hidden width).
class FusionQNetworkImpl : public torch::nn::Module {
 public:
  explicit FusionQNetworkImpl(const FusionQConfig& config);
  at::Tensor forward(const at::Tensor& states);
  const FusionQConfig& config() const { return config_; }

 private:
  FusionQConfig config_;
  torch::nn::Sequential layers_{nullptr};
};
TORCH_MODULE(FusionQNetwork);

// The classifier's weight of action `action`: action / (actions - 1).
at::Tensor fusion_weights(const at::Tensor& actions, std::int64_t action_count);

// state float [G, state_size] -> attack logit [G].
class LogisticFusionImpl : public torch::nn::Module {
 public:
  explicit LogisticFusionImpl(std::int64_t state_size);
  at::Tensor forward(const at::Tensor& states);
  std::int64_t state_size() const { return linear_->options.in_features(); }

 private:
  torch::nn::Linear linear_{nullptr};
};
TORCH_MODULE(LogisticFusion);

}  // namespace headroom::models
