// The task axis at the step: what one training batch is. A task decides how a batch is built
// from ids (whole graphs of a store packed by bytes: graph_task_batch.hpp; seed nodes of one big
// graph: the node task) and which rows its loss reads. The step, its OOM guard, the epoch loop
// and its prefetching see a batch only through these two interfaces, so everything they do —
// precision, loss scaling, clipping, micro-batches after an out-of-memory error, gradient
// averaging across processes, checkpoints, metrics — is shared by every task.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace headroom::train {

// How the training loss averages: over graphs (cross-entropy, distillation), or over nodes (the
// VGAE's reconstruction terms, node classification's labelled nodes).
enum class LossReduction { kPerGraph, kPerNode };

// One training batch, built by its task from a list of ids. Safe to share const; not to mutate
// from two threads.
class TaskBatch {
 public:
  virtual ~TaskBatch() = default;
  // The ids it was built from, in batch order (store graph ids, or seed node ids), read on the
  // host without waiting for a device: micro-batches after an out-of-memory error are built from
  // chunks of them.
  virtual std::vector<std::uint32_t> ids() const = 0;
  // The batch's weight in the loss's average under `reduction`: the graphs or nodes its loss
  // averages over. Micro-batches are weighted by their share of it, processes by theirs.
  virtual double loss_weight(LossReduction reduction) const = 0;
  // The batch on `device` (sharing this one's tensors where they are there already).
  // `non_blocking` overlaps the copy with compute when the batch is in pinned memory.
  virtual std::unique_ptr<TaskBatch> to(const c10::Device& device, bool non_blocking) const = 0;
};

// Builds a task's batches from ids: the epoch's prefetch thread does, and the OOM guard for
// micro-batches. Thread-safe for concurrent calls; what it reads must outlive it.
class BatchBuilder {
 public:
  virtual ~BatchBuilder() = default;
  // The batch of `ids` on the host; in pinned memory with `pin_memory` (for a CUDA step).
  virtual std::unique_ptr<TaskBatch> build(std::span<const std::uint32_t> ids,
                                           bool pin_memory) const = 0;
  // What one id names, for progress, metrics and errors: "graph" or "node".
  virtual const char* unit() const = 0;
};

// The scalar loss of one batch already on the training device; called in training mode inside
// autocast. The task's real objective over the rows it trains on.
using TaskLoss = std::function<at::Tensor(const TaskBatch&)>;

}  // namespace headroom::train
