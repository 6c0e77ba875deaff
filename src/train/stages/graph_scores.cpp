#include "headroom/train/stages/graph_scores.hpp"

#include <torch/torch.h>

#include "headroom/train/batches/sharded_pass.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/loop/training_loop.hpp"

namespace headroom::train {
namespace {

// One score per graph, in id order, computed batch by batch without gradients; the batches are
// planned on `score` itself (it commits nothing, so probing it is the pass's own forward).
std::vector<float> per_graph_scores(
    const store::GraphStore& store, std::span<const std::uint32_t> graph_ids,
    const InferenceLimits& limits, const c10::Device& device, Precision precision,
    const std::function<at::Tensor(const loader::GraphBatch&)>& score, InferenceBatching* plan) {
  torch::NoGradGuard no_grad;
  const auto batching =
      plan_inference_batching(store, graph_ids, limits, device, [&](const loader::GraphBatch& b) {
        AutocastScope autocast(precision, device);
        (void)score(b).to(torch::kCPU);
      });
  if (plan != nullptr) *plan = batching;
  // Sharded over the ranks; the scores come back in id order (train/batches/sharded_pass.hpp).
  const auto contributions = contributions_across_ranks(
      store, graph_ids, batching, device, [&](const loader::GraphBatch& batch) {
        AutocastScope autocast(precision, device);
        const auto host =
            score(batch).to(torch::kCPU, torch::kFloat).to(torch::kDouble).contiguous();
        return BatchContribution(host.data_ptr<double>(), host.data_ptr<double>() + host.numel());
      });
  std::vector<float> out;
  out.reserve(graph_ids.size());
  for (const auto& c : contributions)
    for (const double value : c) out.push_back(static_cast<float>(value));
  return out;
}

}  // namespace

std::vector<float> attack_log_odds_per_graph(models::GraphClassifierImpl& model,
                                             const store::GraphStore& store,
                                             std::span<const std::uint32_t> graph_ids,
                                             const InferenceLimits& limits,
                                             const c10::Device& device, Precision precision,
                                             InferenceBatching* plan) {
  model.eval();
  return per_graph_scores(
      store, graph_ids, limits, device, precision,
      [&](const loader::GraphBatch& batch) {
        return attack_log_odds(
            model.forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs));
      },
      plan);
}

std::vector<float> anomaly_scores(const LoadedAutoencoder& autoencoder,
                                  const store::GraphStore& store,
                                  std::span<const std::uint32_t> graph_ids,
                                  const InferenceLimits& limits, const c10::Device& device,
                                  Precision precision, InferenceBatching* plan) {
  auto& model = *autoencoder.model;
  model.eval();
  return per_graph_scores(
      store, graph_ids, limits, device, precision,
      [&](const loader::GraphBatch& batch) {
        return autoencoder.family->graph_scores(model, batch);
      },
      plan);
}

}  // namespace headroom::train
