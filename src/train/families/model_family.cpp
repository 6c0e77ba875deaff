#include "headroom/train/families/model_family.hpp"

#include <torch/torch.h>

namespace headroom::train {

ProbeSubject ClassifierFamily::plain_subject(const nlohmann::json& model_config) const {
  auto model = build_classifier(model_config);
  return ProbeSubject{{model},
                      [model](const loader::GraphBatch& batch) {
                        const auto logits = model->forward(batch.x, batch.edge_index, batch.batch,
                                                           batch.num_graphs);
                        return torch::cross_entropy_loss(logits.to(torch::kFloat32), batch.y);
                      },
                      LossReduction::kPerGraph};
}

ProbeSubject AutoencoderFamily::plain_subject(const nlohmann::json& model_config) const {
  auto model = build_autoencoder(model_config);
  return ProbeSubject{
      {model},
      [this, model](const loader::GraphBatch& batch) { return training_pass(*model, batch).loss; },
      LossReduction::kPerNode};
}

ModelSpec preset_model(const store::GraphStore& store, std::string_view family,
                       models::ModelSize size) {
  const auto& resolved = model_family(family);
  ModelOptions options;
  options.family = std::string(resolved.name());
  options.size = size;
  return {options.family, resolved.resolve_config(options, model_inputs(store))};
}

at::Tensor attack_probability(const at::Tensor& logits) {
  return torch::softmax(logits.to(torch::kFloat), 1).select(1, 1);
}

at::Tensor attack_log_odds(const at::Tensor& logits) {
  const auto l = logits.to(torch::kFloat);
  const auto attack = l.select(1, 1);
  if (l.size(1) == 2) return attack - l.select(1, 0);
  // Several classes: the attack logit against the log-sum-exp of all the others.
  const auto others = torch::cat({l.narrow(1, 0, 1), l.narrow(1, 2, l.size(1) - 2)}, 1);
  return attack - torch::logsumexp(others, 1);
}

}  // namespace headroom::train
