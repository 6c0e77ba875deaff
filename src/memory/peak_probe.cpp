#include "headroom/memory/peak_probe.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <tuple>

#include "headroom/loader/epoch_order.hpp"
#include "headroom/memory/tensor_memory_meter.hpp"

namespace headroom::memory {
namespace {

std::int64_t read_peak(const c10::Device& device) {
  if (device.is_cuda())
    return cuda_tensor_memory(std::max<int>(0, device.index())).peak_allocated_bytes;
  return cpu_tensor_memory().peak_bytes;
}

}  // namespace

std::vector<std::vector<std::uint32_t>> probe_batches(const store::GraphStore& store,
                                                      std::int64_t max_graphs) {
  if (store.train_ids().empty())
    throw std::invalid_argument("probe_batches: " + store.path().string() +
                                " has no training graphs");
  return probe_batches(store, max_graphs, store.train_ids());
}

std::vector<std::vector<std::uint32_t>> probe_batches(const store::GraphStore& store,
                                                      std::int64_t max_graphs,
                                                      std::span<const std::uint32_t> train_ids) {
  if (train_ids.empty())
    throw std::invalid_argument("probe_batches: no graphs of " + store.path().string() +
                                " to probe");
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

std::int64_t measure_peak_bytes(const c10::Device& device, const std::function<void()>& warm_up,
                                const std::function<void()>& step) {
  install_counting_cpu_allocator();
  warm_up();
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
  reset_peak(device.is_cuda() ? std::max<int>(0, device.index()) : -1);
  step();
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
  return read_peak(device);
}

}  // namespace headroom::memory
