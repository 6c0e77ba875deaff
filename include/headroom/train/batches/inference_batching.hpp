// How an inference pass (validation, evaluation, difficulty scoring) cuts its graphs into
// batches. A fixed graph count per batch either wastes the device or overruns the memory budget
// on the batch that collects the largest graphs (a GAT teacher's evaluation batches of 4,096
// hcrl_sa graphs peak at 1.6 GiB); a budgeted pass is planned instead, as training is: the
// forward pass's peak is measured on a few probe batches of the graphs it will score, fitted as
// a + b*nodes + c*edges + d*graphs (memory/peak_model.hpp), and the graphs are packed by
// predicted bytes up to the packing budget (memory/batch_packer.hpp), with the graph count as a
// cap. What the fit misses, for_each_batch's split-on-OOM still catches.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/loader/graph_batch.hpp"
#include "headroom/memory/batch_packer.hpp"
#include "headroom/store/graph_store.hpp"

namespace headroom::train {

// What an inference pass may use: at most `max_graphs` graphs per batch (--eval-batch-size) and,
// when `packing_budget_bytes` > 0, a batch's predicted peak at most that many bytes (the run's
// target utilisation of its device budget; 0: not planned, fixed batches of max_graphs).
// On CPU the batches collated ahead of the one running (`prefetch_depth` queued and one being
// collated: for_each_batch's prefetcher) are tensors inside the same budget: each batch's plan
// leaves room for that many more of its size.
struct InferenceLimits {
  std::int64_t max_graphs = 4096;
  double packing_budget_bytes = 0;
  std::int64_t prefetch_depth = 4;
};

// How one pass cuts its graphs: fixed-size chunks, or packed by a fitted cost. A value type;
// thread-safe to share const.
struct InferenceBatching {
  std::int64_t max_graphs = 4096;
  std::optional<memory::ByteCostModel> cost;  // set: packed by predicted bytes
  double packing_budget_bytes = 0;
  // How the plan was made, for the run's log and metrics: probe samples, fit, or why not.
  nlohmann::json info = nlohmann::json::object();

  static InferenceBatching fixed(std::int64_t max_graphs);

  // `graph_ids` in order, cut into batches (none empty; their concatenation is `graph_ids`).
  // Packed batches fall back to chunks of max_graphs when one graph alone is predicted over the
  // budget: running it is the only way to know, and for_each_batch's OOM handling says which
  // graph does not fit.
  std::vector<std::vector<std::uint32_t>> cut(const store::GraphStore& store,
                                              std::span<const std::uint32_t> graph_ids) const;
};

// A forward pass of one batch already on the device, without gradients, its result discarded:
// what planning measures. It must allocate what the pass's real work allocates.
using InferenceForward = std::function<void(const loader::GraphBatch&)>;

// Plans the batches of a pass of `forward` over `graph_ids` on `device` within `limits`: fixed
// chunks when limits.packing_budget_bytes is 0 or there are too few graphs to be worth probing;
// otherwise `forward`'s peak measured on probe batches drawn from `graph_ids`
// (memory::probe_batches, at most kInferenceProbeGraphs graphs each; a probe the budget refuses
// is tried on its first half) and fitted. In a data-parallel run every rank gets rank 0's fit, so
// that the ranks cut the graphs alike (train/batches/sharded_pass.hpp); call it on every rank.
// Resets the device's peak counters (memory::measure_peak_bytes): the caller's phase peak then
// holds the probes' and what follows. Not thread-safe (the peak counters are process-wide).
InferenceBatching plan_inference_batching(const store::GraphStore& store,
                                          std::span<const std::uint32_t> graph_ids,
                                          const InferenceLimits& limits, const c10::Device& device,
                                          const InferenceForward& forward);

// The largest probe batch planning runs: enough graphs that the fit sees per-graph costs well
// above its fixed bytes, few enough that probing stays a small share of a pass.
inline constexpr std::int64_t kInferenceProbeGraphs = 64;

}  // namespace headroom::train
