#include "headroom/train/context/run_context.hpp"

#include "headroom/nn/cuda_runtime.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "headroom/train/context/device_budget.hpp"
#include "headroom/train/context/host_memory.hpp"

namespace headroom::train {
namespace {

c10::Device checked_device(const RunOptions& run) {
  const c10::Device device(run.device);
  // CUDA comes with the plugin (nn/cuda_runtime.hpp): loaded here, the first time it is asked for.
  if (device.is_cuda()) nn::load_cuda_plugin();
  if (device.is_cuda() && !torch::cuda::is_available())
    throw std::runtime_error("--device " + run.device +
                             ": no CUDA device is available on this machine (use --device cpu)");
  return device;
}

int applied_thread_count(const RunOptions& run) {
  const int threads = run.threads > 0
                          ? run.threads
                          : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  torch::set_num_threads(threads);
  return threads;
}

}  // namespace

RunContext resolve_run_context(const TrainingConfig& config) {
  RunContext context;
  context.device = checked_device(config.run);
  context.precision = parse_precision(config.run.precision);
  context.threads = applied_thread_count(config.run);
  context.role = util::process_role();
  context.host = host_memory_budget(config.memory);
  context.target_utilization = config.memory.target_utilization;
  return context;
}

void resolve_budgets(RunContext& context, const TrainingConfig& config,
                     const store::GraphStore& store, CommandWork work,
                     const TeacherHostBytes& teacher) {
  TrainingConfig planned = config;
  if (work == CommandWork::kInference) {
    // Inference keeps no training batches queued.
    planned.optimisation.batch_size = 0;
    planned.run.prefetch_depth = 0;
  }
  context.host_plan = plan_run_host_memory(planned, store, context.host, context.device,
                                           teacher.pinned, teacher.cache);
  context.device_budget = device_budget_bytes(config.memory, context.device, context.host_plan);
}

RunContext resolve_run_context(const TrainingConfig& config, const store::GraphStore& store,
                               CommandWork work) {
  auto context = resolve_run_context(config);
  resolve_budgets(context, config, store, work);
  return context;
}

}  // namespace headroom::train
