#include "headroom/train/context/host_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "headroom/memory/anonymous_rss.hpp"
#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/util/byte_size.hpp"
#include "headroom/util/process_role.hpp"

namespace headroom::train {
namespace {

// The sum of the `count` largest values: no batch of `count` graphs holds more.
double largest_sum(std::vector<std::uint32_t> values, std::int64_t count) {
  const auto k = std::min<std::size_t>(values.size(),
                                       static_cast<std::size_t>(std::max<std::int64_t>(0, count)));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end(),
                   std::greater<>());
  double sum = 0;
  for (std::size_t i = 0; i < k; ++i) sum += values[i];
  return sum;
}

// Host bytes of the largest batch of `batch_size` graphs among `ids`, as loader::collate makes it
// for training (no edge features).
double largest_batch_bytes(const store::GraphStore& store, std::span<const std::uint32_t> ids,
                           std::int64_t batch_size) {
  const auto index = store.size_index();
  std::vector<std::uint32_t> nodes;
  std::vector<std::uint32_t> edges;
  nodes.reserve(ids.size());
  edges.reserve(ids.size());
  for (const auto id : ids) {
    nodes.push_back(index.num_nodes[id]);
    edges.push_back(index.num_edges[id]);
  }
  const auto graphs = static_cast<double>(
      std::min<std::int64_t>(batch_size, static_cast<std::int64_t>(ids.size())));
  return memory::collated_batch_bytes(largest_sum(std::move(nodes), batch_size),
                                      largest_sum(std::move(edges), batch_size), graphs,
                                      store.metadata().node_feature_count);
}

}  // namespace

memory::HostMemoryBudget host_memory_budget(const MemoryOptions& memory) {
  return memory::resolve_host_memory_budget(memory.host_budget, memory::detect_host_memory_limit(),
                                            util::process_role().ranks_on_node);
}

double host_baseline_bytes() {
  const auto tensors = memory::cpu_tensor_memory();
  return std::max<double>(0.0, static_cast<double>(memory::process_anonymous_rss_bytes() -
                                                   tensors.current_bytes - tensors.cached_bytes));
}

memory::HostMemoryPlan plan_run_host_memory(const TrainingConfig& config,
                                            const store::GraphStore& store,
                                            const memory::HostMemoryBudget& budget,
                                            const c10::Device& device, double teacher_pinned_bytes,
                                            double teacher_cache_bytes) {
  memory::HostPlanInputs in;
  in.budget_bytes = static_cast<double>(budget.bytes);
  in.budget_source = budget.source;
  in.baseline_bytes = host_baseline_bytes();
  in.cpu_device = !device.is_cuda();
  in.cpu_tensor_budget = in.cpu_device ? static_cast<double>(config.memory.budget) : 0.0;
  in.target_utilization = config.memory.target_utilization;
  in.train_batch_bytes =
      largest_batch_bytes(store, store.train_ids(), config.optimisation.batch_size);
  in.eval_batch_bytes =
      largest_batch_bytes(store, store.validation_ids(), config.optimisation.eval_batch_size);
  in.prefetch_depth = config.run.prefetch_depth;
  in.teacher_pinned_bytes = teacher_pinned_bytes;
  in.teacher_cache_bytes = teacher_cache_bytes;
  in.store_bytes = static_cast<double>(store.bytes_on_disk());
  return memory::plan_host_memory(in);
}

void check_host_memory(const memory::HostMemoryBudget& budget, const std::string& where,
                       const std::string& next) {
  auto rss = memory::process_anonymous_rss_bytes();
  if (rss <= budget.bytes) return;
  // Freed blocks kept for reuse are the first thing to give back: only what is still over after
  // that stops the run.
  if (memory::release_cached_host_memory() > 0) rss = memory::process_anonymous_rss_bytes();
  if (rss <= budget.bytes) return;
  throw std::runtime_error(fmt::format(
      "host memory: the process's anonymous RSS {} crossed the host budget {} ({}) at {}; "
      "stopped before the kernel's OOM killer would act; {}",
      util::format_byte_size(static_cast<double>(rss)),
      util::format_byte_size(static_cast<double>(budget.bytes)), budget.source, where, next));
}

}  // namespace headroom::train
