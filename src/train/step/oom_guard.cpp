#include "headroom/train/step/oom_guard.hpp"

#include "headroom/nn/cuda_runtime.hpp"

#include <torch/torch.h>

#include <ATen/autocast_mode.h>
#include <fmt/format.h>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "headroom/loader/epoch_order.hpp"
#include "headroom/util/allocation_site.hpp"

namespace headroom::train {

OomGuard::OomGuard(const BatchBuilder& batches, const c10::Device& device, LossReduction reduction)
    : batches_(batches), device_(device), reduction_(reduction) {}

GuardedBatch OomGuard::attempt(const TaskBatch& host_batch, const std::vector<std::uint32_t>& ids,
                               std::int64_t parts, const TaskLoss& loss,
                               const std::function<void(const at::Tensor&)>& backward) {
  // Named so that fault injection can aim at training steps alone (HEADROOM_INJECT_OOM=...:step),
  // apart from the peak probe's steps that may run before them.
  const util::AllocationSite site("step");
  GuardedBatch step;
  step.parts = parts;
  if (parts == 1) {
    auto value = loss(*host_batch.to(device_, /*non_blocking=*/true));
    backward(value);
    step.loss = value.detach();
    return step;
  }
  const auto per_part =
      (ids.size() + static_cast<std::size_t>(parts) - 1) / static_cast<std::size_t>(parts);
  const double total = host_batch.loss_weight(reduction_);
  for (const auto& part_ids : loader::chunk(ids, per_part)) {
    const auto part = batches_.build(part_ids, device_.is_cuda())->to(device_, true);
    auto value = loss(*part) * (part->loss_weight(reduction_) / total);
    backward(value);
    step.loss = step.loss.defined() ? step.loss + value.detach() : value.detach();
  }
  return step;
}

GuardedBatch OomGuard::run(const TaskBatch& host_batch, const TaskLoss& loss,
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
  const auto ids = host_batch.ids();
  const auto count = static_cast<std::int64_t>(ids.size());
  std::int64_t oom_events = 0;
  std::int64_t parts = std::min<std::int64_t>(parts_, std::max<std::int64_t>(1, count));
  while (true) {
    try {
      auto step = attempt(host_batch, ids, parts, loss, backward);
      step.oom_events = oom_events;
      parts_ = std::max(parts_, parts);
      return step;
    } catch (const c10::OutOfMemoryError& error) {
      ++oom_events;
      zero_grad();
      at::autocast::clear_cache();
      if (device_.is_cuda()) nn::empty_cuda_cache();
      cpu_generator.set_state(cpu_state);
      if (cuda_generator) cuda_generator->set_state(cuda_state);
      if (parts >= count) {
        const std::string unit = batches_.unit();
        throw std::runtime_error(fmt::format(
            "out of memory even with one {} per micro-batch (batch of {} {}s starting with {} "
            "{}): {}",
            unit, count, unit, unit, count > 0 ? std::int64_t{ids.front()} : -1,
            error.what_without_backtrace()));
      }
      parts = std::min<std::int64_t>(parts * 2, count);
    }
  }
}

}  // namespace headroom::train
