#include "headroom/train/batches/inference_batching.hpp"

#include <torch/torch.h>

#include <ATen/autocast_mode.h>

#include <algorithm>

#include "headroom/loader/collate.hpp"
#include "headroom/loader/epoch_order.hpp"
#include "headroom/memory/host_memory_plan.hpp"
#include "headroom/memory/peak_model.hpp"
#include "headroom/memory/peak_probe.hpp"
#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/nn/cuda_runtime.hpp"
#include "headroom/train/context/collectives.hpp"
#include "headroom/util/allocation_site.hpp"

namespace headroom::train {
namespace {

// Below this many graphs a pass is about as long as its probes: it runs in fixed batches.
constexpr std::size_t kFewestGraphsToPlan = 4 * kInferenceProbeGraphs;

// `forward`'s peak on `ids`, or nullopt when the budget refuses even one graph of them. A batch
// the budget refuses is measured on its first half instead (the fit needs sizes, not these ids).
std::optional<memory::PeakSample> probe_forward(const store::GraphStore& store,
                                                std::vector<std::uint32_t> ids,
                                                const c10::Device& device, bool warm_up,
                                                const InferenceForward& forward) {
  while (!ids.empty()) {
    try {
      const util::AllocationSite site("inference probe");
      loader::CollateOptions options;
      options.pin_memory = device.is_cuda();
      const auto batch = loader::collate(store, ids, options).to(device, /*non_blocking=*/false);
      // The first probe warms up what a pass creates once (CUDA workspaces, autocast's casts).
      const auto peak = memory::measure_peak_bytes(
          device,
          [&] {
            if (warm_up) forward(batch);
          },
          [&] { forward(batch); });
      return memory::PeakSample{.nodes = static_cast<std::uint64_t>(batch.num_nodes),
                                .edges = static_cast<std::uint64_t>(batch.num_edges),
                                .graphs = static_cast<std::uint64_t>(batch.num_graphs),
                                .peak_bytes = static_cast<double>(peak)};
    } catch (const c10::OutOfMemoryError&) {
      at::autocast::clear_cache();
      if (device.is_cuda()) nn::empty_cuda_cache();
      ids.resize(ids.size() / 2);
    }
  }
  return std::nullopt;
}

// Rank 0's cost model on every rank (every rank measured one; they may differ by noise).
memory::ByteCostModel cost_of_rank0(const memory::ByteCostModel& cost) {
  std::vector<at::Tensor> values = {torch::tensor(
      {cost.fixed_bytes, cost.bytes_per_node, cost.bytes_per_edge, cost.bytes_per_graph},
      torch::kDouble)};
  collectives().broadcast_from_rank0(values);
  const auto agreed = values[0].contiguous();
  const double* v = agreed.data_ptr<double>();
  return memory::ByteCostModel{v[0], v[1], v[2], v[3]};
}

}  // namespace

InferenceBatching InferenceBatching::fixed(std::int64_t max_graphs) {
  InferenceBatching batching;
  batching.max_graphs = max_graphs;
  return batching;
}

std::vector<std::vector<std::uint32_t>> InferenceBatching::cut(
    const store::GraphStore& store, std::span<const std::uint32_t> graph_ids) const {
  if (cost) {
    const auto index = store.size_index();
    try {
      return memory::pack_by_bytes(graph_ids, index.num_nodes, index.num_edges, *cost,
                                   packing_budget_bytes, static_cast<std::size_t>(max_graphs))
          .batches;
    } catch (const memory::OversizeGraphError&) {
      // Falls through to fixed chunks (see the header).
    }
  }
  return loader::chunk(graph_ids, static_cast<std::size_t>(max_graphs));
}

InferenceBatching plan_inference_batching(const store::GraphStore& store,
                                          std::span<const std::uint32_t> graph_ids,
                                          const InferenceLimits& limits, const c10::Device& device,
                                          const InferenceForward& forward) {
  auto batching = InferenceBatching::fixed(limits.max_graphs);
  // Every rank takes the same branch: the ids and limits are the same on every rank.
  if (limits.packing_budget_bytes <= 0 || graph_ids.size() < kFewestGraphsToPlan) {
    batching.info = {{"planned", false},
                     {"why", limits.packing_budget_bytes <= 0 ? "no memory budget to pack for"
                                                              : "too few graphs to probe"}};
    return batching;
  }
  const auto probe_graphs = std::min(limits.max_graphs, kInferenceProbeGraphs);
  std::vector<memory::PeakSample> samples;
  bool warm_up = true;
  for (const auto& ids : memory::probe_batches(store, probe_graphs, graph_ids)) {
    if (auto sample = probe_forward(store, ids, device, warm_up, forward)) {
      samples.push_back(*sample);
      warm_up = false;
    }
  }
  const auto fit = memory::fit_peak(samples);
  auto cost = fit.cost_model();
  if (!device.is_cuda()) {
    // The other batches' inputs (the probe measured its own batch's): the queue's and the one
    // being collated into it, each as large as the batch being planned (a queue of equals is the
    // worst case).
    const auto queued = static_cast<double>(limits.prefetch_depth + 1);
    const auto features = store.metadata().node_feature_count;
    cost.bytes_per_node += queued * memory::collated_batch_bytes(1, 0, 0, features);
    cost.bytes_per_edge += queued * memory::collated_batch_bytes(0, 1, 0, features);
    cost.bytes_per_graph += queued * memory::collated_batch_bytes(0, 0, 1, features);
  }
  // A fit with nothing to go on (every probe refused) leaves fixed batches, which split on OOM.
  const bool usable = samples.size() >= 2 && memory::peak_fit_problem(fit, samples).empty();
  if (!agree_with_rank0(collectives(), usable)) {
    batching.info = {{"planned", false}, {"why", "the probes could not be fitted"}};
    return batching;
  }
  batching.cost = cost_of_rank0(cost);
  batching.packing_budget_bytes = limits.packing_budget_bytes;
  batching.info = {{"planned", true},
                   {"probes", samples.size()},
                   {"fixed_bytes", batching.cost->fixed_bytes},
                   {"bytes_per_node", batching.cost->bytes_per_node},
                   {"bytes_per_edge", batching.cost->bytes_per_edge},
                   {"bytes_per_graph", batching.cost->bytes_per_graph},
                   {"max_relative_error", fit.max_relative_error},
                   {"packing_budget_bytes", limits.packing_budget_bytes}};
  return batching;
}

}  // namespace headroom::train
