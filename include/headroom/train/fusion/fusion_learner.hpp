// How a fusion stage learns to combine a classifier's attack level p with a VGAE's anomaly level a
// (fusion_features.hpp). Two learners, one interface:
//  - "fusion-dqn" (upstream's fusion): a Double DQN whose action per graph is the classifier's
//    weight w in {0, 0.05, ..., 1}; the fused score is w p + (1 - w) a and the reward is +-1 for a
//    right or wrong decision at 0.5 plus half the signed margin, weighted so that both classes
//    count equally. Experience replay, a target network synchronised every 100 updates, Huber
//    loss, AdamW; epsilon-greedy exploration decaying per epoch from 1 to 0.05.
//  - "fusion-logistic": a logistic regression on the whole state, class-balanced BCE, AdamW.
// Every random draw comes from the generator an epoch is given, so that a run resumed after its
// last finished epoch continues exactly as if never interrupted. Not thread-safe.
#pragma once

#include <torch/nn/module.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <ATen/core/Generator.h>
#include <nlohmann/json.hpp>

namespace headroom::train {

// One row per graph, on the CPU.
struct FusionData {
  at::Tensor states;       // float [G, kFusionStateSize]
  at::Tensor labels;       // float [G], 1 = attack
  at::Tensor probability;  // p, the attack level (attack_levels), float [G]
  at::Tensor anomaly;      // a, float [G]

  std::int64_t size() const { return labels.defined() ? labels.size(0) : 0; }
  FusionData rows(const at::Tensor& index) const;
};

struct FusionLearnerOptions {
  double learning_rate = 1e-3;
  double weight_decay = 1e-4;
  double gradient_clip = 1.0;  // max global L2 norm; 0 disables
  double gamma = 0;            // DQN only: the discount of the next graph's value
};

class FusionLearner {
 public:
  virtual ~FusionLearner() = default;
  // The checkpoint kind: "fusion-dqn" or "fusion-logistic".
  virtual std::string_view kind() const = 0;
  // The module best.pt holds, and the JSON that rebuilds it (make_fusion_learner).
  virtual torch::nn::Module& model() = 0;
  virtual nlohmann::json network_config() const = 0;
  // One pass over `fit` (epoch `epoch`, 0-based) visiting its rows in `order` (int64 [G], a
  // permutation of 0..G-1: the stage's epoch order, loader/epoch_order) and drawing every other
  // random number from `generator`. Returns the mean training loss.
  virtual double train_epoch(const FusionData& fit, const at::Tensor& order,
                             at::Generator& generator, std::int64_t epoch) = 0;
  // The fused P(attack) per graph, float [G] in [0, 1] (the DQN acts greedily). No grad.
  virtual at::Tensor fused_scores(const FusionData& data) = 0;
  // The classifier's weight per graph (the DQN's chosen action), or an undefined tensor when the
  // learner has no such weight.
  virtual at::Tensor classifier_weights(const FusionData& data) {
    (void)data;
    return {};
  }
  // What resuming needs beyond model(): optimiser, target network, replay memory, counters.
  virtual void save_state(torch::serialize::OutputArchive& archive) const = 0;
  virtual void load_state(torch::serialize::InputArchive& archive) = 0;
};

// A fresh learner of `kind` ("fusion-dqn" / "fusion-logistic", or the method names "dqn" /
// "logistic") whose network follows `network_config` (null: the default network), initialised from
// torch's global generator. Throws std::invalid_argument for an unknown kind.
std::unique_ptr<FusionLearner> make_fusion_learner(std::string_view kind,
                                                   const nlohmann::json& network_config,
                                                   const FusionLearnerOptions& options = {});

// Class-balanced binary cross-entropy of fused scores in [0, 1]: what a fusion's best epoch
// minimises on its held-out graphs.
double balanced_fusion_loss(const at::Tensor& scores, const at::Tensor& labels);

}  // namespace headroom::train
