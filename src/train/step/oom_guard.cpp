#include "headroom/train/step/oom_guard.hpp"

#include <torch/torch.h>

#include <ATen/autocast_mode.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <fmt/format.h>
#include <optional>
#include <stdexcept>
#include <vector>

#include "headroom/loader/collate.hpp"
#include "headroom/loader/epoch_order.hpp"
#include "headroom/util/allocation_site.hpp"

namespace headroom::train {

OomGuard::OomGuard(const store::GraphStore& store, const c10::Device& device,
                   LossReduction reduction)
    : store_(store), device_(device), reduction_(reduction) {}

GuardedStep OomGuard::attempt(const loader::GraphBatch& host_batch, std::int64_t parts,
                              const std::function<at::Tensor(const loader::GraphBatch&)>& loss,
                              const std::function<void(const at::Tensor&)>& backward) {
  // Named so that fault injection can aim at training steps alone (HEADROOM_INJECT_OOM=...:step),
  // apart from the peak probe's steps that may run before them.
  const util::AllocationSite site("step");
  GuardedStep step;
  step.parts = parts;
  if (parts == 1) {
    const auto batch = host_batch.to(device_, /*non_blocking=*/true);
    auto value = loss(batch);
    backward(value);
    step.loss = value.detach();
    return step;
  }
  const auto ids = host_batch.graph_id_list();
  const auto per_part =
      (ids.size() + static_cast<std::size_t>(parts) - 1) / static_cast<std::size_t>(parts);
  loader::CollateOptions options;
  options.edge_features = host_batch.edge_attr.defined();
  options.pin_memory = device_.is_cuda();
  const double total = reduction_ == LossReduction::kPerGraph
                           ? static_cast<double>(host_batch.num_graphs)
                           : static_cast<double>(host_batch.num_nodes);
  for (const auto& part_ids : loader::chunk(ids, per_part)) {
    const auto part = loader::collate(store_, part_ids, options).to(device_, true);
    const double share =
        (reduction_ == LossReduction::kPerGraph ? static_cast<double>(part.num_graphs)
                                                : static_cast<double>(part.num_nodes)) /
        total;
    auto value = loss(part) * share;
    backward(value);
    step.loss = step.loss.defined() ? step.loss + value.detach() : value.detach();
  }
  return step;
}

GuardedStep OomGuard::run(const loader::GraphBatch& host_batch,
                          const std::function<at::Tensor(const loader::GraphBatch&)>& loss,
                          const std::function<void(const at::Tensor&)>& backward,
                          const std::function<void()>& zero_grad) {
  // Dropout and sampling draw from the default generators: a retry starts from the same state.
  // (A generator's state is its seed and offset, read on the host: no device synchronisation.)
  auto cpu_generator = at::globalContext().defaultGenerator(at::kCPU);
  const auto cpu_state = cpu_generator.get_state();
  std::optional<at::Generator> cuda_generator;
  at::Tensor cuda_state;
  if (device_.is_cuda()) {
    cuda_generator = at::globalContext().defaultGenerator(device_);
    cuda_state = cuda_generator->get_state();
  }
  std::int64_t oom_events = 0;
  std::int64_t parts =
      std::min<std::int64_t>(parts_, std::max<std::int64_t>(1, host_batch.num_graphs));
  while (true) {
    try {
      auto step = attempt(host_batch, parts, loss, backward);
      step.oom_events = oom_events;
      parts_ = std::max(parts_, parts);
      return step;
    } catch (const c10::OutOfMemoryError& error) {
      ++oom_events;
      zero_grad();
      at::autocast::clear_cache();
      if (device_.is_cuda()) c10::cuda::CUDACachingAllocator::emptyCache();
      cpu_generator.set_state(cpu_state);
      if (cuda_generator) cuda_generator->set_state(cuda_state);
      if (parts >= host_batch.num_graphs) {
        const auto ids = host_batch.graph_ids.to(torch::kCPU).to(torch::kInt64);
        throw std::runtime_error(fmt::format(
            "out of memory even with one graph per micro-batch (batch of {} graphs starting with "
            "graph {}): {}",
            host_batch.num_graphs, host_batch.num_graphs > 0 ? ids[0].item<std::int64_t>() : -1,
            error.what_without_backtrace()));
      }
      parts = std::min<std::int64_t>(parts * 2, host_batch.num_graphs);
    }
  }
}

}  // namespace headroom::train
