#include "headroom/train/context/run_context.hpp"

#include <torch/torch.h>

#include <ATen/cuda/CUDAContext.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "headroom/train/context/host_memory.hpp"
#include "headroom/train/context/node_run_context.hpp"

namespace headroom::train {
namespace {

c10::Device checked_device(const RunOptions& run) {
  const c10::Device device(run.device);
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

// --memory-budget, else the device's memory on CUDA, else what the host plan leaves for CPU
// tensors (the host plan counts the process, the store's pages, the prefetch queue and the
// teacher first).
std::int64_t device_budget_bytes(const MemoryOptions& memory, const c10::Device& device,
                                 const memory::HostMemoryPlan& host_plan) {
  if (memory.budget > 0) return memory.budget;
  if (device.is_cuda())
    return static_cast<std::int64_t>(
        at::cuda::getDeviceProperties(std::max<int>(0, device.index()))->totalGlobalMem);
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(host_plan.cpu_tensor_budget));
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

RunContext resolve_node_run_context(const TrainingConfig& config,
                                    const store::NodeGraphStore& store) {
  auto context = resolve_run_context(config);
  memory::HostPlanInputs in;
  in.budget_bytes = static_cast<double>(context.host.bytes);
  in.budget_source = context.host.source;
  in.baseline_bytes = host_baseline_bytes();
  in.cpu_device = !context.device.is_cuda();
  in.cpu_tensor_budget = in.cpu_device ? static_cast<double>(config.memory.budget) : 0.0;
  in.target_utilization = config.memory.target_utilization;
  constexpr double kSeedBytes = 16;  // an int64 id and an int64 label
  in.train_batch_bytes =
      kSeedBytes * static_cast<double>(store.nodes_in(store::NodeSplit::kTrain).size());
  in.eval_batch_bytes = 0;  // validation reads the seeds of the whole graph's one output
  in.prefetch_depth = config.run.prefetch_depth;
  in.eval_prefetch_depth = 0;
  in.store_bytes = static_cast<double>(store.bytes_on_disk());
  context.host_plan = memory::plan_host_memory(in);
  context.device_budget = device_budget_bytes(config.memory, context.device, context.host_plan);
  return context;
}

}  // namespace headroom::train
