#include "headroom/train/graph_scores.hpp"

#include <torch/torch.h>

#include "headroom/train/losses.hpp"
#include "headroom/train/model_family.hpp"
#include "headroom/train/training_loop.hpp"

namespace headroom::train {
namespace {

void append(std::vector<float>& out, const at::Tensor& values) {
  const auto host = values.to(torch::kCPU, torch::kFloat).contiguous();
  const float* data = host.data_ptr<float>();
  out.insert(out.end(), data, data + host.numel());
}

// One score per graph, in id order, computed batch by batch without gradients.
std::vector<float> per_graph_scores(
    const store::GraphStore& store, std::span<const std::uint32_t> graph_ids,
    std::int64_t batch_size, const c10::Device& device, Precision precision,
    const std::function<at::Tensor(const loader::GraphBatch&)>& score) {
  torch::NoGradGuard no_grad;
  std::vector<float> out;
  out.reserve(graph_ids.size());
  for_each_batch(store, graph_ids, batch_size, device, [&](const loader::GraphBatch& batch) {
    AutocastScope autocast(precision, device);
    append(out, score(batch));
  });
  return out;
}

}  // namespace

std::vector<float> attack_probabilities(models::GraphClassifierImpl& model,
                                        const store::GraphStore& store,
                                        std::span<const std::uint32_t> graph_ids,
                                        std::int64_t batch_size, const c10::Device& device,
                                        Precision precision) {
  model.eval();
  return per_graph_scores(
      store, graph_ids, batch_size, device, precision, [&](const loader::GraphBatch& batch) {
        return attack_probability(
            model.forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs));
      });
}

std::vector<float> reconstruction_scores(models::VGAE& model, const store::GraphStore& store,
                                         std::span<const std::uint32_t> graph_ids,
                                         std::int64_t batch_size, const c10::Device& device,
                                         Precision precision) {
  model->eval();
  return per_graph_scores(
      store, graph_ids, batch_size, device, precision, [&](const loader::GraphBatch& batch) {
        return graph_reconstruction_score(model->forward(batch.x, batch.edge_index), batch);
      });
}

}  // namespace headroom::train
