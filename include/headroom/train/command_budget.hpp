// The memory budgets of one command, in force before its first allocation on the device: the
// host plan (memory/host_memory_plan.hpp) checked against the host budget, then the device
// budget applied (CPU: the counting allocator refuses tensor allocations past it; CUDA: the
// caching allocator is capped at its share of the device). Training (run_training), evaluation
// and fusion's scoring all start here, so that every command that runs a model keeps to the
// budget the user set, and each phase's peak is measured as its own.
// Not thread-safe: the budgets are process-wide; call from the command's main thread.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <string>

#include "headroom/memory/host_memory_budget.hpp"
#include "headroom/memory/host_memory_plan.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/run_directory.hpp"
#include "headroom/train/training_config.hpp"

namespace headroom::train {

struct CommandBudgets {
  c10::Device device = c10::Device(c10::kCPU);
  std::int64_t device_budget = 0;  // bytes of tensors on `device`
  memory::HostMemoryBudget host;
  memory::HostMemoryPlan host_plan;
};

// What a command does with the device: training keeps a prefetch queue of training batches;
// inference (evaluation, scoring) only the validation-sized batches of for_each_batch.
enum class CommandWork { kTraining, kInference };

// Plans the host side of `config` on `store`, logs the plan to `run`, and applies the device
// budget (--memory-budget; by default the device's memory on CUDA and, on CPU, what the host plan
// leaves). Throws std::runtime_error naming every planned item when the host plan does not fit.
CommandBudgets apply_command_budgets(const TrainingConfig& config, const store::GraphStore& store,
                                     RunDirectory& run, CommandWork work);

// Applies `budget` bytes on `device` alone (no host plan): what `headroom plan` does before it
// measures. Returns the line that says so, for a log.
std::string apply_device_budget(const TrainingConfig& config, std::int64_t budget,
                                const c10::Device& device);

// Runs `work` as one phase: the device's peak counter starts at what is live, and what the phase
// leaves cached (freed host blocks, the CUDA caching allocator's unused blocks) is released
// afterwards, so that the next phase measures its own peak. Returns the phase's peak tensor bytes
// on `device`.
std::int64_t run_phase(const c10::Device& device, const std::function<void()>& work);

// "peak 12.3 MiB (4.5% of the memory budget)": a phase's peak for the log.
std::string phase_peak_text(std::int64_t peak_bytes, std::int64_t budget_bytes);

}  // namespace headroom::train
