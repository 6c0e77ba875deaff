#include "headroom/train/fusion/fusion_learner.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "headroom/models/fusion_networks.hpp"
#include "headroom/train/fusion/fusion_features.hpp"

namespace headroom::train {
namespace {

constexpr std::int64_t kTransitionsPerUpdate = 32;  // DQN: graphs acted on between updates
constexpr std::int64_t kReplayBatch = 128;
constexpr std::int64_t kReplayCapacity = 50000;
constexpr std::int64_t kTargetSyncEvery = 100;  // updates
constexpr double kEpsilonStart = 1.0;
constexpr double kEpsilonEnd = 0.05;
constexpr double kEpsilonDecay = 0.8;  // per epoch
constexpr std::int64_t kLogisticBatch = 64;

// Weights that make both classes count equally: G / (2 * count of the class).
at::Tensor class_weights(const at::Tensor& labels) {
  const double total = static_cast<double>(labels.size(0));
  const double attacks = labels.sum().item<double>();
  const double normal = total - attacks;
  const double attack_weight = attacks > 0 ? total / (2 * attacks) : 0.0;
  const double normal_weight = normal > 0 ? total / (2 * normal) : 0.0;
  return labels * attack_weight + (1 - labels) * normal_weight;
}

// train_epoch's `order` must visit each of fit's rows: one of another length would leave rows
// untrained or index past the end.
void check_visiting_order(const FusionData& fit, const at::Tensor& order) {
  if (order.dim() != 1 || order.size(0) != fit.size() || order.scalar_type() != torch::kLong)
    throw std::invalid_argument("fusion train_epoch: the order must be int64 [" +
                                std::to_string(fit.size()) + "], one entry per fitting graph");
}

torch::optim::AdamW make_optimizer(torch::nn::Module& model, const FusionLearnerOptions& o) {
  return torch::optim::AdamW(
      model.parameters(), torch::optim::AdamWOptions(o.learning_rate).weight_decay(o.weight_decay));
}

void clip(torch::nn::Module& model, double max_norm) {
  if (max_norm > 0) torch::nn::utils::clip_grad_norm_(model.parameters(), max_norm);
}

void save_module(torch::serialize::OutputArchive& archive, const std::string& key,
                 const torch::nn::Module& module) {
  torch::serialize::OutputArchive part;
  module.save(part);
  archive.write(key, part);
}

void load_module(torch::serialize::InputArchive& archive, const std::string& key,
                 torch::nn::Module& module) {
  torch::serialize::InputArchive part;
  archive.read(key, part);
  module.load(part);
}

class DqnFusion final : public FusionLearner {
 public:
  DqnFusion(const models::FusionQConfig& config, const FusionLearnerOptions& options)
      : options_(options),
        online_(config),
        target_(config),
        optimizer_(make_optimizer(*online_, options)) {
    sync_target();
    target_->eval();
    states_ = torch::zeros({kReplayCapacity, config.state_size});
    next_states_ = torch::zeros({kReplayCapacity, config.state_size});
    actions_ = torch::zeros({kReplayCapacity}, torch::kLong);
    rewards_ = torch::zeros({kReplayCapacity});
    done_ = torch::zeros({kReplayCapacity});
  }

  std::string_view kind() const override { return "fusion-dqn"; }
  torch::nn::Module& model() override { return *online_; }
  nlohmann::json network_config() const override { return online_->config(); }

  double train_epoch(const FusionData& fit, const at::Tensor& order, at::Generator& generator,
                     std::int64_t epoch) override {
    check_visiting_order(fit, order);
    const std::int64_t graphs = fit.size();
    const double epsilon =
        std::max(kEpsilonEnd, kEpsilonStart * std::pow(kEpsilonDecay, static_cast<double>(epoch)));
    const at::Tensor weights = class_weights(fit.labels);
    double loss_sum = 0;
    std::int64_t updates = 0;
    for (std::int64_t start = 0; start < graphs; start += kTransitionsPerUpdate) {
      const std::int64_t end = std::min(graphs, start + kTransitionsPerUpdate);
      act(fit, weights, order.slice(0, start, end), order, end, epsilon, generator);
      if (stored_ < kReplayBatch) continue;
      loss_sum += update(generator);
      ++updates;
    }
    return updates > 0 ? loss_sum / static_cast<double>(updates) : 0.0;
  }

  at::Tensor classifier_weights(const FusionData& data) override {
    torch::NoGradGuard no_grad;
    online_->eval();
    const auto actions = online_->forward(data.states).argmax(1);
    return models::fusion_weights(actions, online_->config().actions);
  }

  at::Tensor fused_scores(const FusionData& data) override {
    const at::Tensor w = classifier_weights(data);
    return w * data.probability + (1 - w) * data.anomaly;
  }

  void save_state(torch::serialize::OutputArchive& archive) const override {
    save_module(archive, "target", *target_);
    torch::serialize::OutputArchive optimizer;
    optimizer_.save(optimizer);
    archive.write("optimizer", optimizer);
    // Only the filled part of the replay memory: last.pt is written after every epoch.
    const auto filled = [&](const at::Tensor& t) { return t.slice(0, 0, stored_).clone(); };
    archive.write("replay_states", filled(states_), /*is_buffer=*/true);
    archive.write("replay_next_states", filled(next_states_), true);
    archive.write("replay_actions", filled(actions_), true);
    archive.write("replay_rewards", filled(rewards_), true);
    archive.write("replay_done", filled(done_), true);
    archive.write("replay_position", c10::IValue(position_));
    archive.write("replay_stored", c10::IValue(stored_));
    archive.write("updates", c10::IValue(updates_));
  }

  void load_state(torch::serialize::InputArchive& archive) override {
    load_module(archive, "target", *target_);
    torch::serialize::InputArchive optimizer;
    archive.read("optimizer", optimizer);
    optimizer_.load(optimizer);
    const auto restore = [&](const char* key, at::Tensor& buffer) {
      at::Tensor filled;
      archive.read(key, filled, /*is_buffer=*/true);
      buffer.zero_();
      buffer.slice(0, 0, filled.size(0)).copy_(filled);
    };
    restore("replay_states", states_);
    restore("replay_next_states", next_states_);
    restore("replay_actions", actions_);
    restore("replay_rewards", rewards_);
    restore("replay_done", done_);
    c10::IValue value;
    archive.read("replay_position", value);
    position_ = value.toInt();
    archive.read("replay_stored", value);
    stored_ = value.toInt();
    archive.read("updates", value);
    updates_ = value.toInt();
  }

 private:
  // Acts epsilon-greedily on the graphs `chunk` (rows of fit) and stores the transitions. A
  // graph's next state is the one after it in this epoch's `order`; the last graph ends the
  // episode.
  void act(const FusionData& fit, const at::Tensor& class_weight, const at::Tensor& chunk,
           const at::Tensor& order, std::int64_t chunk_end, double epsilon,
           at::Generator& generator) {
    torch::NoGradGuard no_grad;
    const std::int64_t n = chunk.size(0);
    const std::int64_t action_count = online_->config().actions;
    const at::Tensor states = fit.states.index_select(0, chunk);
    online_->eval();
    const at::Tensor greedy = online_->forward(states).argmax(1);
    const at::Tensor random = at::randint(action_count, {n}, generator, torch::kLong);
    const at::Tensor explore = at::rand({n}, generator) < epsilon;
    const at::Tensor actions = at::where(explore, random, greedy);

    const at::Tensor w = models::fusion_weights(actions, action_count);
    const at::Tensor p = fit.probability.index_select(0, chunk);
    const at::Tensor a = fit.anomaly.index_select(0, chunk);
    const at::Tensor y = fit.labels.index_select(0, chunk);
    const at::Tensor fused = w * p + (1 - w) * a;
    const at::Tensor correct = ((fused > 0.5).to(at::kFloat) == y).to(at::kFloat);
    const at::Tensor signed_label = 2 * y - 1;
    const at::Tensor reward = class_weight.index_select(0, chunk) *
                              ((2 * correct - 1) + 0.5 * signed_label * (2 * fused - 1));

    const std::int64_t graphs = order.size(0);
    const at::Tensor next_positions =
        at::arange(chunk_end - n + 1, chunk_end + 1, torch::kLong).clamp_max(graphs - 1);
    const at::Tensor next_states =
        fit.states.index_select(0, order.index_select(0, next_positions));
    const at::Tensor done = (at::arange(chunk_end - n + 1, chunk_end + 1) >= graphs).to(at::kFloat);

    const at::Tensor slots = (at::arange(n, torch::kLong) + position_) % kReplayCapacity;
    states_.index_copy_(0, slots, states);
    next_states_.index_copy_(0, slots, next_states);
    actions_.index_copy_(0, slots, actions);
    rewards_.index_copy_(0, slots, reward);
    done_.index_copy_(0, slots, done);
    position_ = (position_ + n) % kReplayCapacity;
    stored_ = std::min(kReplayCapacity, stored_ + n);
  }

  // One Double-DQN update on a replay sample: the online network picks the next action, the
  // target network values it.
  double update(at::Generator& generator) {
    const at::Tensor sample = at::randint(stored_, {kReplayBatch}, generator, torch::kLong);
    const at::Tensor states = states_.index_select(0, sample);
    const at::Tensor actions = actions_.index_select(0, sample);
    at::Tensor target = rewards_.index_select(0, sample);
    if (options_.gamma > 0) {
      torch::NoGradGuard no_grad;
      const at::Tensor next = next_states_.index_select(0, sample);
      online_->eval();
      const at::Tensor next_action = online_->forward(next).argmax(1, /*keepdim=*/true);
      const at::Tensor next_value = target_->forward(next).gather(1, next_action).squeeze(1);
      target = target + options_.gamma * (1 - done_.index_select(0, sample)) * next_value;
    }
    online_->train();
    const at::Tensor q = online_->forward(states).gather(1, actions.unsqueeze(1)).squeeze(1);
    const at::Tensor loss = torch::smooth_l1_loss(q, target.detach());
    optimizer_.zero_grad();
    loss.backward();
    clip(*online_, options_.gradient_clip);
    optimizer_.step();
    if (++updates_ % kTargetSyncEvery == 0) sync_target();
    return loss.item<double>();
  }

  void sync_target() {
    torch::NoGradGuard no_grad;
    const auto source = online_->parameters();
    auto destination = target_->parameters();
    for (std::size_t i = 0; i < source.size(); ++i) destination[i].copy_(source[i]);
  }

  FusionLearnerOptions options_;
  models::FusionQNetwork online_;
  models::FusionQNetwork target_;
  torch::optim::AdamW optimizer_;
  at::Tensor states_, next_states_, actions_, rewards_, done_;  // replay memory (a ring)
  std::int64_t position_ = 0;
  std::int64_t stored_ = 0;
  std::int64_t updates_ = 0;
};

class LogisticFusionLearner final : public FusionLearner {
 public:
  LogisticFusionLearner(std::int64_t state_size, const FusionLearnerOptions& options)
      : options_(options), model_(state_size), optimizer_(make_optimizer(*model_, options)) {}

  std::string_view kind() const override { return "fusion-logistic"; }
  torch::nn::Module& model() override { return *model_; }
  nlohmann::json network_config() const override { return {{"state_size", model_->state_size()}}; }

  double train_epoch(const FusionData& fit, const at::Tensor& order, at::Generator&,
                     std::int64_t) override {
    check_visiting_order(fit, order);
    model_->train();
    const at::Tensor weights = class_weights(fit.labels);
    double loss_sum = 0;
    std::int64_t steps = 0;
    for (std::int64_t start = 0; start < fit.size(); start += kLogisticBatch) {
      const at::Tensor rows = order.slice(0, start, std::min(fit.size(), start + kLogisticBatch));
      const at::Tensor logits = model_->forward(fit.states.index_select(0, rows));
      const at::Tensor loss = at::binary_cross_entropy_with_logits(
          logits, fit.labels.index_select(0, rows), weights.index_select(0, rows), {},
          at::Reduction::Mean);
      optimizer_.zero_grad();
      loss.backward();
      clip(*model_, options_.gradient_clip);
      optimizer_.step();
      loss_sum += loss.item<double>();
      ++steps;
    }
    return steps > 0 ? loss_sum / static_cast<double>(steps) : 0.0;
  }

  at::Tensor fused_scores(const FusionData& data) override {
    torch::NoGradGuard no_grad;
    model_->eval();
    return torch::sigmoid(model_->forward(data.states));
  }

  void save_state(torch::serialize::OutputArchive& archive) const override {
    torch::serialize::OutputArchive optimizer;
    optimizer_.save(optimizer);
    archive.write("optimizer", optimizer);
  }

  void load_state(torch::serialize::InputArchive& archive) override {
    torch::serialize::InputArchive optimizer;
    archive.read("optimizer", optimizer);
    optimizer_.load(optimizer);
  }

 private:
  FusionLearnerOptions options_;
  models::LogisticFusion model_;
  torch::optim::AdamW optimizer_;
};

}  // namespace

FusionData FusionData::rows(const at::Tensor& index) const {
  return {states.index_select(0, index), labels.index_select(0, index),
          probability.index_select(0, index), anomaly.index_select(0, index)};
}

std::unique_ptr<FusionLearner> make_fusion_learner(std::string_view kind,
                                                   const nlohmann::json& network_config,
                                                   const FusionLearnerOptions& options) {
  if (kind == "fusion-dqn" || kind == "dqn") {
    models::FusionQConfig config;
    config.state_size = kFusionStateSize;
    if (!network_config.is_null()) config = network_config.get<models::FusionQConfig>();
    return std::make_unique<DqnFusion>(config, options);
  }
  if (kind == "fusion-logistic" || kind == "logistic") {
    const std::int64_t state_size = network_config.is_null()
                                        ? kFusionStateSize
                                        : network_config.at("state_size").get<std::int64_t>();
    return std::make_unique<LogisticFusionLearner>(state_size, options);
  }
  throw std::invalid_argument("unknown fusion kind '" + std::string(kind) + "'");
}

double balanced_fusion_loss(const at::Tensor& scores, const at::Tensor& labels) {
  if (scores.size(0) == 0) return 0.0;
  const at::Tensor clamped = scores.to(at::kDouble).clamp(1e-7, 1 - 1e-7);
  const at::Tensor y = labels.to(at::kDouble);
  const at::Tensor per_graph = -(y * clamped.log() + (1 - y) * (1 - clamped).log());
  const at::Tensor weights = class_weights(y);
  return (per_graph * weights).sum().item<double>() / weights.sum().item<double>();
}

}  // namespace headroom::train
