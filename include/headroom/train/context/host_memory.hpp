// The host memory of a training run: its host budget, its host plan on a store
// (memory/host_memory_plan.hpp) and the watch over the process's anonymous RSS while it trains,
// which stops the run with a message (how to resume) before the kernel would kill it.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <string>

#include "headroom/memory/host_memory_budget.hpp"
#include "headroom/memory/host_memory_plan.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/config/training_config.hpp"

namespace headroom::train {

// memory.host_budget, or the detected limit less the margin, divided among the run's ranks on this
// machine (util::process_role()). Throws std::invalid_argument when the flag exceeds the detected
// limit.
memory::HostMemoryBudget host_memory_budget(const MemoryOptions& memory);

// Bytes: the anonymous RSS less the CPU tensors' live and cached bytes (those are planned inside
// the CPU tensor budget), at least 0.
double host_baseline_bytes();

// The host plan of `config` on `store` now. `teacher_pinned_bytes`, `teacher_cache_bytes`: what
// the teacher holds on the host (memory::TeacherCost), when the caller knows; a stage that has
// already loaded its teacher has it in the baseline.
// `device`: the run's (on CPU the tensors are planned inside the host budget).
memory::HostMemoryPlan plan_run_host_memory(const TrainingConfig& config,
                                            const store::GraphStore& store,
                                            const memory::HostMemoryBudget& budget,
                                            const c10::Device& device = c10::Device(c10::kCPU),
                                            double teacher_pinned_bytes = 0,
                                            double teacher_cache_bytes = 0);

// Throws std::runtime_error when the anonymous RSS is above `budget`: the message names the RSS,
// the budget and its source, `where` (e.g. "epoch 2 step 40") and `next` (how to go on).
void check_host_memory(const memory::HostMemoryBudget& budget, const std::string& where,
                       const std::string& next);

}  // namespace headroom::train
