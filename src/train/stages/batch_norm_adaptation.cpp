#include "headroom/train/stages/batch_norm_adaptation.hpp"

#include <torch/torch.h>

#include <optional>

#include "headroom/train/batches/inference_batches.hpp"
#include "headroom/train/families/model_family.hpp"

namespace headroom::train {
namespace {

// Every BatchNorm1d of `model`, in module order (the same order on every call).
std::vector<torch::nn::BatchNorm1dImpl*> batch_norms(torch::nn::Module& model) {
  std::vector<torch::nn::BatchNorm1dImpl*> found;
  for (const auto& module : model.modules(/*include_self=*/true))
    if (auto* norm = module->as<torch::nn::BatchNorm1d>(); norm != nullptr) found.push_back(norm);
  return found;
}

}  // namespace

BatchNormStatistics::BatchNormStatistics(torch::nn::Module& model) {
  for (auto* norm : batch_norms(model))
    saved_.push_back(
        {norm->running_mean.clone(), norm->running_var.clone(), norm->num_batches_tracked.clone()});
}

void BatchNormStatistics::restore(torch::nn::Module& model) const {
  const auto norms = batch_norms(model);
  TORCH_CHECK(norms.size() == saved_.size(), "BatchNormStatistics::restore: another model");
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < norms.size(); ++i) {
    norms[i]->running_mean.copy_(saved_[i].mean);
    norms[i]->running_var.copy_(saved_[i].variance);
    norms[i]->num_batches_tracked.copy_(saved_[i].batches);
  }
}

std::size_t adapt_batch_norm(const LoadedAutoencoder& autoencoder, const store::GraphStore& store,
                             std::span<const std::uint32_t> graph_ids, std::int64_t batch_size,
                             const c10::Device& device, Precision precision) {
  auto& model = *autoencoder.model;
  model.eval();
  const auto norms = batch_norms(model);
  if (norms.empty() || graph_ids.empty()) return 0;
  std::vector<std::optional<double>> momenta;
  for (auto* norm : norms) {
    momenta.push_back(norm->options.momentum());
    norm->reset_running_stats();
    norm->options.momentum(std::nullopt);  // a cumulative average over the batches
    norm->train();  // only the norms: dropout and the rest stay in evaluation mode
  }
  torch::NoGradGuard no_grad;
  for_each_batch(store, graph_ids, batch_size, device, [&](const loader::GraphBatch& batch) {
    AutocastScope autocast(precision, device);
    (void)autoencoder.family->evidence(model, batch);
  });
  for (std::size_t i = 0; i < norms.size(); ++i) norms[i]->options.momentum(momenta[i]);
  model.eval();
  return norms.size();
}

}  // namespace headroom::train
