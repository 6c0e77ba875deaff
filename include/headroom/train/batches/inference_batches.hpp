// Inference over a list of graphs in fixed-size batches: collated in the background, moved to
// the device, and split in halves when a batch runs out of memory. What validation, evaluation,
// difficulty scoring, teacher caches and fusion's scoring run on.
#pragma once

#include <c10/core/Device.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "headroom/loader/graph_batch.hpp"
#include "headroom/store/graph_store.hpp"

namespace headroom::train {

// Runs `fn` on every batch of `graph_ids` (in order, `batch_size` graphs each), collated in the
// background and moved to `device`. A batch whose `fn` runs out of memory is redone in halves
// (recursively), so `fn` must only commit its results once it has computed them. Returns the
// seconds spent waiting for batches.
double for_each_batch(const store::GraphStore& store, std::span<const std::uint32_t> graph_ids,
                      std::int64_t batch_size, const c10::Device& device,
                      const std::function<void(const loader::GraphBatch&)>& fn,
                      std::size_t prefetch_depth = 4);
// The same over batches cut by the caller (inference_batching.hpp plans them), in order.
double for_each_batch(const store::GraphStore& store,
                      std::vector<std::vector<std::uint32_t>> batches, const c10::Device& device,
                      const std::function<void(const loader::GraphBatch&)>& fn,
                      std::size_t prefetch_depth = 4);

}  // namespace headroom::train
