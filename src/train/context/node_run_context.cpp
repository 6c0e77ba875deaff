#include "headroom/train/context/node_run_context.hpp"

#include "headroom/memory/host_memory_plan.hpp"
#include "headroom/train/context/device_budget.hpp"
#include "headroom/train/context/host_memory.hpp"

namespace headroom::train {

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
