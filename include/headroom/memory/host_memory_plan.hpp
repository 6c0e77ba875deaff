// The host side of a run's memory, planned before training: what the process holds in RAM besides
// the training device's tensors, item by item, against the host budget (host_memory_budget.hpp),
// and the adaptations that make it fit. Plain data; no torch.
//
// Items (bytes):
//  - baseline: the process's anonymous RSS outside CPU tensors when the plan is made (code,
//    LibTorch's pools, the store's index, what the stage loaded), measured.
//  - CPU tensors (device cpu): the tensor budget the counting allocator enforces. Everything the
//    step allocates, the prefetch queue's batches and freed blocks kept for reuse live inside it.
//    Left at its default, it is what the host budget leaves after the other counted items.
//  - prefetch queue: (depth + 1) batches of the largest training batch — `depth` waiting in
//    loader::BatchPrefetcher's queue and one in the step. On CUDA they are collated into pinned
//    memory and counted; on CPU they are inside the tensor budget, and the depth is lowered until
//    they fit in its share the batch planner leaves free ((1 - target utilization) x budget).
//  - validation queue: the same for validation and evaluation batches (for_each_batch, depth 4).
//  - teacher weights (pinned): an offloaded teacher's float32 weights in pinned host memory.
//  - page cache, not counted: the store's arrays and the teacher output cache are memory-mapped
//    files; their pages are charged to the cgroup but are clean and reclaimed under its limit
//    (re-read from disk), never a reason for the OOM killer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace headroom::memory {

// Host bytes of one collated batch (loader/graph_batch.hpp): x float32 [nodes, node_features],
// batch int64 [nodes], edge_index int64 [2, edges], edge_attr float32 [edges, edge_features]
// when collated (0 features otherwise), y and graph_ids int64 [graphs].
double collated_batch_bytes(double nodes, double edges, double graphs, std::int64_t node_features,
                            std::int64_t edge_features = 0);

struct HostPlanInputs {
  double budget_bytes = 0;
  std::string budget_source;
  double baseline_bytes = 0;
  bool cpu_device = true;
  double cpu_tensor_budget = 0;  // CPU: --memory-budget, 0 for what the host budget leaves
  double target_utilization = 0.9;
  double train_batch_bytes = 0;  // the largest training batch (collated_batch_bytes)
  double eval_batch_bytes = 0;   // the largest validation batch
  std::int64_t prefetch_depth = 4;
  std::int64_t eval_prefetch_depth = 4;
  double teacher_pinned_bytes = 0;
  double teacher_cache_bytes = 0;  // mapped teacher output file
  double store_bytes = 0;          // mapped store arrays
};

struct HostPlanItem {
  std::string name;
  double bytes = 0;
  bool counted = true;  // false: page cache, or already inside the CPU tensor budget
  std::string note;
};

struct HostMemoryPlan {
  double budget_bytes = 0;
  std::string budget_source;
  std::vector<HostPlanItem> items;
  double required_bytes = 0;             // the counted items' sum
  double cpu_tensor_budget = 0;          // CPU: the tensor budget to apply (0 on CUDA)
  std::int64_t prefetch_depth = 0;       // to use (at most the requested one)
  std::vector<std::string> adaptations;  // what was lowered to fit, for the log
  bool fits = false;
};

HostMemoryPlan plan_host_memory(const HostPlanInputs& inputs);

// Why the plan does not fit: the budget, its source, each counted item, and what to change.
std::string host_plan_failure(const HostMemoryPlan& plan);
// The "host memory" section of `headroom plan`.
std::string render_host_memory_plan(const HostMemoryPlan& plan);
void to_json(nlohmann::json& json, const HostMemoryPlan& plan);

}  // namespace headroom::memory
