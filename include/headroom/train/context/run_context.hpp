// What a command runs with, resolved once at its start from the configuration and handed down:
// the device, the precision, the thread count, this process's rank, and the memory budgets as
// numbers. Nothing below the command derives them again, so the budget that is enforced is the
// budget that batches are packed to.
// Plain data once resolved; resolving applies the thread count to LibTorch's intra-op pool
// (process-wide: call from the command's main thread).
#pragma once

#include <c10/core/Device.h>

#include <cstdint>

#include "headroom/memory/host_memory_budget.hpp"
#include "headroom/memory/host_memory_plan.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/step/precision.hpp"
#include "headroom/util/process_role.hpp"

namespace headroom::train {

// What a command does with the device: training keeps a prefetch queue of training batches;
// inference (evaluation, scoring) only the validation-sized batches of for_each_batch.
enum class CommandWork { kTraining, kInference };

// What the run's teacher holds on the host (memory::TeacherCost), when the command knows it before
// loading the teacher (`headroom plan`); a stage that has loaded its teacher has it in the
// baseline.
struct TeacherHostBytes {
  double pinned = 0;  // an offloaded teacher's pinned copy
  double cache = 0;   // the teacher output cache's mapped file
};

struct RunContext {
  c10::Device device = c10::Device(c10::kCPU);
  Precision precision = Precision::kFloat32;
  int threads = 1;         // LibTorch intra-op threads (applied)
  util::ProcessRole role;  // rank, world size, ranks on this machine
  // Host RAM: the budget, and the command's plan under it (memory/host_memory_plan.hpp).
  memory::HostMemoryBudget host;
  memory::HostMemoryPlan host_plan;
  // Bytes of tensors on `device`: what the counting allocator (CPU) or the caching allocator's cap
  // (CUDA) enforces, and what batches are packed to (times target_utilization). --memory-budget;
  // by default the device's memory on CUDA and, on CPU, what the host plan leaves for tensors.
  std::int64_t device_budget = 0;
  double target_utilization = 0.9;

  // target_utilization x device_budget: the bytes one packed batch's predicted peak may reach.
  double packing_budget_bytes() const {
    return target_utilization * static_cast<double>(device_budget);
  }
};

// Resolves what `config` names: throws std::runtime_error when CUDA is asked for and absent,
// std::invalid_argument for a precision or host budget that cannot be. Applies the thread count.
// The budgets are left for resolve_budgets.
RunContext resolve_run_context(const TrainingConfig& config);

// Plans the host side of `work` on `store` (with `teacher`'s host bytes) into context.host_plan and
// sets context.device_budget. Does not apply them (apply_command_budgets does, before the first
// device allocation that must be inside them).
void resolve_budgets(RunContext& context, const TrainingConfig& config,
                     const store::GraphStore& store, CommandWork work,
                     const TeacherHostBytes& teacher = {});

// Both, for a command whose teacher (if any) is loaded by the command itself.
RunContext resolve_run_context(const TrainingConfig& config, const store::GraphStore& store,
                               CommandWork work);

}  // namespace headroom::train
