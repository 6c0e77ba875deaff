#include "headroom/train/context/device_budget.hpp"

#include "headroom/nn/cuda_runtime.hpp"


#include <algorithm>

namespace headroom::train {

std::int64_t device_budget_bytes(const MemoryOptions& memory, const c10::Device& device,
                                 const memory::HostMemoryPlan& host_plan) {
  if (memory.budget > 0) return memory.budget;
  if (device.is_cuda())
    return nn::cuda_total_memory_bytes(std::max<int>(0, device.index()));
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(host_plan.cpu_tensor_budget));
}

}  // namespace headroom::train
