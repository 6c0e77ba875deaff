// The device budget of a command, by one rule for every kind of run (run_context.hpp,
// node_run_context.hpp): --memory-budget, else the device's memory on CUDA, else what the host
// plan leaves for CPU tensors (the host plan counts the process, the store's pages, the prefetch
// queue and the teacher first).
#pragma once

#include <c10/core/Device.h>

#include <cstdint>

#include "headroom/memory/host_memory_plan.hpp"
#include "headroom/train/config/training_config.hpp"

namespace headroom::train {

// Bytes of tensors the command may hold on `device`; at least 1.
std::int64_t device_budget_bytes(const MemoryOptions& memory, const c10::Device& device,
                                 const memory::HostMemoryPlan& host_plan);

}  // namespace headroom::train
