#include "headroom/train/context/device_budget.hpp"

#include <ATen/cuda/CUDAContext.h>

#include <algorithm>

namespace headroom::train {

std::int64_t device_budget_bytes(const MemoryOptions& memory, const c10::Device& device,
                                 const memory::HostMemoryPlan& host_plan) {
  if (memory.budget > 0) return memory.budget;
  if (device.is_cuda())
    return static_cast<std::int64_t>(
        at::cuda::getDeviceProperties(std::max<int>(0, device.index()))->totalGlobalMem);
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(host_plan.cpu_tensor_budget));
}

}  // namespace headroom::train
