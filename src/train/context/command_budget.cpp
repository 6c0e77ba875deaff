#include "headroom/train/context/command_budget.hpp"

#include "headroom/nn/cuda_runtime.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "headroom/memory/cuda_allocator_defaults.hpp"
#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/util/byte_size.hpp"
#include "headroom/util/stop_injection.hpp"

namespace headroom::train {
namespace {

void log_lines(RunDirectory& run, const std::string& text) {
  std::size_t begin = 0;
  while (begin < text.size()) {
    const auto end = std::min(text.find('\n', begin), text.size());
    run.log(text.substr(begin, end - begin));
    begin = end + 1;
  }
}

// cuBLAS takes its workspace (33 MiB on an H200, cuBLASLt's included; CUBLAS_WORKSPACE_CONFIG
// sets it) from the caching allocator at a thread's first matrix product on a stream, and keeps
// it. Taken here, under the cap and before the memory probe, it is a fixed cost that every probe
// sample carries, instead of a 32 MiB request in the middle of a step once the capped memory is in
// use (the first GPU check: "out of memory even with one graph per micro-batch" at 87 MiB). A
// product without a bias (cuBLAS) and a linear layer with one (addmm, cuBLASLt) cover both.
// Returns the bytes that stayed allocated.
std::int64_t take_cublas_workspace(const c10::Device& device) {
  const int index = std::max<int>(0, device.index());
  const auto before = memory::cuda_tensor_memory(index).allocated_bytes;
  {
    const auto a = torch::ones({8, 8}, torch::TensorOptions().device(device));
    (void)torch::mm(a, a);
    (void)torch::nn::functional::linear(a, a, a[0]);
  }
  torch::cuda::synchronize(index);
  return std::max<std::int64_t>(0, memory::cuda_tensor_memory(index).allocated_bytes - before);
}

}  // namespace

void apply_command_budgets(const TrainingConfig& config, const RunContext& context,
                           RunDirectory& run) {
  log_lines(run, memory::render_host_memory_plan(context.host_plan));
  util::stop_if_injected_at_host_plan();  // HEADROOM_INJECT_STOP
  if (!context.host_plan.fits)
    throw std::runtime_error(memory::host_plan_failure(context.host_plan));
  run.log(apply_device_budget(config, context));
}

std::string apply_device_budget(const TrainingConfig& config, const RunContext& context) {
  const auto budget = context.device_budget;
  const auto& device = context.device;
  std::string allocator;
  if (device.is_cuda()) {
    const auto settings = memory::cuda_allocator_settings();
    allocator = "; CUDA caching allocator: " + (settings.empty() ? "LibTorch defaults" : settings);
    const auto index = std::max<int>(0, device.index());
    const auto total = static_cast<double>(nn::cuda_total_memory_bytes(index));
    nn::set_cuda_memory_fraction(std::min(1.0, static_cast<double>(budget) / total), index);
    std::int64_t workspace = 0;
    try {
      workspace = take_cublas_workspace(device);
    } catch (const c10::OutOfMemoryError&) {
      throw std::runtime_error(fmt::format(
          "memory budget {} on {}: cuBLAS's workspace does not fit in it (33 MiB on an H200; "
          "CUBLAS_WORKSPACE_CONFIG sets it): raise --memory-budget",
          util::format_byte_size(static_cast<double>(budget)), device.str()));
    }
    if (workspace > 0)
      allocator += "; cuBLAS workspace " + util::format_byte_size(static_cast<double>(workspace)) +
                   " taken up front";
  } else {
    memory::set_cpu_tensor_budget(budget);
  }
  return fmt::format("memory budget {} on {}{}{}",
                     util::format_byte_size(static_cast<double>(budget)), device.str(),
                     config.memory.budget > 0
                         ? ""
                         : (device.is_cuda() ? " (default: the device's memory)"
                                             : " (default: what the host memory budget leaves)"),
                     allocator);
}

std::int64_t run_phase(const c10::Device& device, const std::function<void()>& work) {
  const bool cuda = device.is_cuda();
  const int cuda_index = cuda ? std::max<int>(0, device.index()) : -1;
  memory::reset_peak(cuda_index);
  const auto release = [&] {
    if (cuda)
      nn::empty_cuda_cache();
    else
      memory::release_cached_host_memory();
  };
  try {
    work();
  } catch (...) {
    release();
    throw;
  }
  const auto snapshot = memory::memory_snapshot(cuda_index);
  release();
  return memory::device_peak_bytes(snapshot, cuda);
}

std::string phase_peak_text(std::int64_t peak_bytes, std::int64_t budget_bytes) {
  return fmt::format("peak {} ({:.1f}% of the memory budget)",
                     util::format_byte_size(static_cast<double>(peak_bytes)),
                     100.0 * static_cast<double>(peak_bytes) / static_cast<double>(budget_bytes));
}

}  // namespace headroom::train
