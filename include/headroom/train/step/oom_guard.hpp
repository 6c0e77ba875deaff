// Out-of-memory recovery for a training step. A device OOM (c10::OutOfMemoryError from the CUDA
// caching allocator) or a host allocation failure (the CPU tensor budget's refusal included)
// anywhere in forward or backward is caught; what the attempt held is freed, and the batch is
// redone as 2, 4, 8, ... micro-batches, built by the task from chunks of the batch's ids
// (task_batch.hpp), whose losses are weighted by their share of the batch, so the accumulated
// gradients equal the unsplit batch's (exactly for per-graph losses without batch statistics;
// BatchNorm's batch statistics differ per micro-batch). Nothing is skipped.
// The split that worked is kept for the following batches of the run: the observation sizes the
// next steps (the byte packer's plan is not changed mid-run, so that a resumed run plans the same
// epochs). Not thread-safe: one per training loop.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>

#include "headroom/train/step/task_batch.hpp"

namespace headroom::train {

// What running one batch under the guard gave.
struct GuardedBatch {
  at::Tensor loss;              // the batch's loss (weighted sum over micro-batches), detached
  std::int64_t parts = 1;       // micro-batches the batch ran as
  std::int64_t oom_events = 0;  // failed attempts in this step
};

class OomGuard {
 public:
  // `batches` builds the micro-batches; it must outlive the guard.
  OomGuard(const BatchBuilder& batches, const c10::Device& device, LossReduction reduction);

  // Runs loss(batch) and backward for `host_batch` (built on the host); `backward(loss)` scales
  // and backpropagates (loss scaling lives there); `zero_grad` clears gradients before a retry.
  // Rethrows when a single id's batch does not fit, naming it.
  GuardedBatch run(const TaskBatch& host_batch, const TaskLoss& loss,
                   const std::function<void(const at::Tensor&)>& backward,
                   const std::function<void()>& zero_grad);

  std::int64_t parts() const { return parts_; }

 private:
  GuardedBatch attempt(const TaskBatch& host_batch, const std::vector<std::uint32_t>& ids,
                       std::int64_t parts, const TaskLoss& loss,
                       const std::function<void(const at::Tensor&)>& backward);

  const BatchBuilder& batches_;
  c10::Device device_;
  LossReduction reduction_;
  std::int64_t parts_ = 1;
};

}  // namespace headroom::train
