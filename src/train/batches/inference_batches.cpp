#include "headroom/train/batches/inference_batches.hpp"

#include "headroom/nn/cuda_runtime.hpp"

#include <torch/torch.h>

#include <ATen/autocast_mode.h>
#include <fmt/format.h>

#include "headroom/loader/batch_prefetcher.hpp"
#include "headroom/loader/collate.hpp"
#include "headroom/loader/epoch_order.hpp"
#include "headroom/util/allocation_site.hpp"

namespace headroom::train {
namespace {

// Inference needs no gradient bookkeeping: on OOM the batch is simply run in halves. A single
// graph that does not fit cannot be split further: the error, still an out-of-memory error (so
// that the training loop adds where and how to resume), names the graph and the device.
void run_splitting_on_oom(const store::GraphStore& store, const loader::GraphBatch& host,
                          const c10::Device& device,
                          const std::function<void(const loader::GraphBatch&)>& fn) {
  try {
    const util::AllocationSite site("inference");
    fn(host.to(device, /*non_blocking=*/true));
    return;
  } catch (const c10::OutOfMemoryError& error) {
    if (host.num_graphs <= 1)
      throw c10::OutOfMemoryError(fmt::format(
          "out of memory in inference (scoring, validation or evaluation) on one graph alone: "
          "graph {} ({} nodes, {} edges) on {}: {}",
          host.graph_id_list().front(), host.num_nodes, host.edge_index.size(1), device.str(),
          error.what_without_backtrace()));
    at::autocast::clear_cache();
    if (device.is_cuda()) nn::empty_cuda_cache();
  }
  const auto ids = host.graph_id_list();
  loader::CollateOptions options;
  options.edge_features = host.edge_attr.defined();
  options.pin_memory = device.is_cuda();
  for (const auto& half : loader::chunk(ids, (ids.size() + 1) / 2))
    run_splitting_on_oom(store, loader::collate(store, half, options), device, fn);
}

}  // namespace

double for_each_batch(const store::GraphStore& store, std::span<const std::uint32_t> graph_ids,
                      std::int64_t batch_size, const c10::Device& device,
                      const std::function<void(const loader::GraphBatch&)>& fn,
                      std::size_t prefetch_depth) {
  return for_each_batch(store, loader::chunk(graph_ids, static_cast<std::size_t>(batch_size)),
                        device, fn, prefetch_depth);
}

double for_each_batch(const store::GraphStore& store,
                      std::vector<std::vector<std::uint32_t>> batches, const c10::Device& device,
                      const std::function<void(const loader::GraphBatch&)>& fn,
                      std::size_t prefetch_depth) {
  loader::CollateOptions options;
  options.pin_memory = device.is_cuda();
  loader::BatchPrefetcher prefetcher(store, std::move(batches), options, prefetch_depth);
  while (auto batch = prefetcher.next()) run_splitting_on_oom(store, *batch, device, fn);
  return prefetcher.wait_seconds();
}

}  // namespace headroom::train
