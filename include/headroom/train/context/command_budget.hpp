// The memory budgets of one command, in force before its first allocation on the device: the
// host plan (memory/host_memory_plan.hpp) checked against the host budget, then the device
// budget applied (CPU: the counting allocator refuses tensor allocations past it; CUDA: the
// caching allocator is capped at its share of the device). Training (task/task_driver.hpp),
// evaluation and fusion's scoring all start here, so that every command that runs a model keeps to
// the budget the user set, and each phase's peak is measured as its own.
// Not thread-safe: the budgets are process-wide; call from the command's main thread.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <string>

#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_context.hpp"
#include "headroom/train/context/run_directory.hpp"

namespace headroom::train {

// Logs `context`'s host plan to `run`, throws std::runtime_error naming every planned item when it
// does not fit, and applies context.device_budget on context.device.
void apply_command_budgets(const TrainingConfig& config, const RunContext& context,
                           RunDirectory& run);

// Applies context.device_budget on context.device alone (no host plan): what `headroom plan` does
// before it measures. Returns the line that says so, for a log.
std::string apply_device_budget(const TrainingConfig& config, const RunContext& context);

// Runs `work` as one phase: the device's peak counter starts at what is live, and what the phase
// leaves cached (freed host blocks, the CUDA caching allocator's unused blocks) is released
// afterwards, so that the next phase measures its own peak. Returns the phase's peak tensor bytes
// on `device`.
std::int64_t run_phase(const c10::Device& device, const std::function<void()>& work);

// "peak 12.3 MiB (4.5% of the memory budget)": a phase's peak for the log.
std::string phase_peak_text(std::int64_t peak_bytes, std::int64_t budget_bytes);

}  // namespace headroom::train
