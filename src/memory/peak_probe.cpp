#include "headroom/memory/peak_probe.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <variant>

#include "headroom/loader/collate.hpp"
#include "headroom/loader/epoch_order.hpp"
#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/models/gat_with_jk.hpp"
#include "headroom/models/vgae.hpp"
#include "headroom/train/losses.hpp"

namespace headroom::memory {
namespace {

// The model of one probe and its loss on a batch; destroyed with the probe.
struct ProbeTask {
  std::shared_ptr<torch::nn::Module> module;
  std::function<at::Tensor(const loader::GraphBatch&)> loss;
};

ProbeTask make_task(const ProbeModelConfig& config) {
  if (const auto* gat = std::get_if<models::GatConfig>(&config)) {
    models::GATWithJK model(*gat);
    return {model.ptr(), [model](const loader::GraphBatch& batch) mutable {
              const auto logits =
                  model->forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs);
              return torch::cross_entropy_loss(logits.to(torch::kFloat32), batch.y);
            }};
  }
  const auto& vgae = std::get<models::VgaeConfig>(config);
  models::VGAE model(vgae);
  const std::int64_t num_ids = vgae.num_ids;
  return {
      model.ptr(), [model, num_ids](const loader::GraphBatch& batch) mutable {
        return train::vgae_loss(model->forward(batch.x, batch.edge_index), batch, num_ids).total;
      }};
}

std::int64_t read_peak(const c10::Device& device) {
  if (device.is_cuda())
    return cuda_tensor_memory(std::max<int>(0, device.index())).peak_allocated_bytes;
  return cpu_tensor_memory().peak_bytes;
}

PeakSample probe_one(const store::GraphStore& store, const ProbeModelConfig& config,
                     std::span<const std::uint32_t> ids, const PeakProbeOptions& options) {
  const c10::Device& device = options.device;
  loader::CollateOptions collate_options;
  const auto batch = loader::collate(store, ids, collate_options).to(device);

  ProbeTask task = make_task(config);
  task.module->to(device);
  task.module->train();
  const auto parameters = task.module->parameters();
  torch::optim::Adam optimizer(
      parameters,
      torch::optim::AdamOptions(options.learning_rate).weight_decay(options.weight_decay));
  train::DynamicLossScaler scaler(options.precision == train::Precision::kFp16Mixed);

  const auto step = [&] {
    optimizer.zero_grad(/*set_to_none=*/true);
    at::Tensor loss;
    {
      train::AutocastScope autocast(options.precision, device);
      loss = task.loss(batch);
    }
    scaler.scale(loss).backward();
    const bool finite = scaler.unscale(parameters);
    if (finite) {
      if (options.gradient_clip > 0)
        torch::nn::utils::clip_grad_norm_(parameters, options.gradient_clip);
      optimizer.step();
    }
    scaler.update(finite);
  };

  step();  // warm-up: creates Adam's moment buffers
  // The previous step's gradients are freed at the start of the next one in training, so they are
  // not part of the steady-state baseline.
  optimizer.zero_grad(/*set_to_none=*/true);
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
  reset_peak(device.is_cuda() ? std::max<int>(0, device.index()) : -1);
  step();
  if (device.is_cuda()) torch::cuda::synchronize(device.index());

  PeakSample sample;
  sample.nodes = static_cast<std::uint64_t>(batch.num_nodes);
  sample.edges = static_cast<std::uint64_t>(batch.num_edges);
  sample.graphs = static_cast<std::uint64_t>(batch.num_graphs);
  sample.peak_bytes = static_cast<double>(read_peak(device));
  return sample;
}

}  // namespace

ProbeModelConfig probe_model_preset(const store::GraphStore& store, models::ModelKind kind,
                                    models::ModelSize size) {
  const auto num_ids = static_cast<std::int64_t>(store.metadata().vocabulary.size()) + 1;
  if (kind == models::ModelKind::kGat) return models::gat_preset(size, num_ids);
  return models::vgae_preset(size, num_ids);
}

std::vector<std::vector<std::uint32_t>> probe_batches(const store::GraphStore& store,
                                                      std::int64_t max_graphs) {
  const auto train_ids = store.train_ids();
  if (train_ids.empty())
    throw std::invalid_argument("probe_batches: " + store.path().string() +
                                " has no training graphs");
  if (max_graphs < 1)
    throw std::invalid_argument("probe_batches: max_graphs must be at least 1, got " +
                                std::to_string(max_graphs));
  const auto index = store.size_index();
  std::vector<std::uint32_t> by_size(train_ids.begin(), train_ids.end());
  std::sort(by_size.begin(), by_size.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::tie(index.num_nodes[a], index.num_edges[a], a) <
           std::tie(index.num_nodes[b], index.num_edges[b], b);
  });
  const auto n = static_cast<std::int64_t>(by_size.size());
  const auto capped = [&](std::int64_t size) { return std::min({size, max_graphs, n}); };
  // `size` consecutive graphs of the size order, centred on quantile q (shifted inside the ends).
  const auto window = [&](double q, std::int64_t size) {
    const auto centre = static_cast<std::int64_t>(std::llround(q * static_cast<double>(n - 1)));
    const auto first = std::clamp<std::int64_t>(centre - size / 2, 0, n - size);
    return std::vector<std::uint32_t>(by_size.begin() + first, by_size.begin() + first + size);
  };
  std::vector<std::vector<std::uint32_t>> sets;
  const auto add = [&](std::vector<std::uint32_t> set) {
    if (std::find(sets.begin(), sets.end(), set) == sets.end()) sets.push_back(std::move(set));
  };
  const auto small = capped(64);
  const auto large = capped(256);
  for (const double q : {0.0, 0.5, 0.95, 1.0}) add(window(q, small));
  for (const double q : {0.0, 1.0}) add(window(q, large));
  const auto mixed = loader::shuffled(train_ids, 0, 0);
  add(std::vector<std::uint32_t>(mixed.begin(), mixed.begin() + capped(1024)));
  if (sets.size() < 2) sets.push_back(sets.front());
  return sets;
}

PeakSample probe_training_peak(const store::GraphStore& store, const ProbeModelConfig& model,
                               std::span<const std::uint32_t> ids,
                               const PeakProbeOptions& options) {
  install_counting_cpu_allocator();
  return probe_one(store, model, ids, options);
}

std::vector<PeakSample> probe_training_peaks(const store::GraphStore& store,
                                             const ProbeModelConfig& model,
                                             std::span<const std::int64_t> batch_sizes,
                                             const PeakProbeOptions& options) {
  const auto train_ids = store.train_ids();
  for (const auto size : batch_sizes)
    if (size < 1 || static_cast<std::uint64_t>(size) > train_ids.size())
      throw std::invalid_argument("probe_training_peaks: batch size " + std::to_string(size) +
                                  " is outside 1.." + std::to_string(train_ids.size()) +
                                  " (the store's training graphs)");
  install_counting_cpu_allocator();
  const auto order = loader::shuffled(train_ids, 0, 0);
  std::vector<PeakSample> samples;
  samples.reserve(batch_sizes.size());
  for (const auto size : batch_sizes)
    samples.push_back(
        probe_one(store, model, std::span(order).first(static_cast<std::size_t>(size)), options));
  return samples;
}

}  // namespace headroom::memory
