// The training step, the only one: forward under the configured precision, the stage's real
// loss, backward (scaled for fp16), the after-backward gradient hook, unscale, clipping, the
// optimiser step and the loss-scale update — with the OOM guard's micro-batch split around
// forward and backward. The epoch loop (training_loop.hpp), the peak probe (step_probe.hpp) and
// the benchmarks all run this class, so what is measured is what trains.
// Not thread-safe: one per training loop (autocast and the guard's state are per thread).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "headroom/loader/graph_batch.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/step/graph_task_batch.hpp"
#include "headroom/train/step/oom_guard.hpp"
#include "headroom/train/step/precision.hpp"

namespace headroom::train {

// The scalar loss of one graph batch, already on the training device; called in training mode
// inside autocast. The graph stages' real objective (cross-entropy, distillation, the VGAE's
// terms); graph_task_loss makes it a TaskLoss.
using BatchLoss = std::function<at::Tensor(const loader::GraphBatch&)>;

// Called once per step after backward and before unscaling and clipping, with every trained
// parameter and the batch's weight in the loss's average (its graphs for a per-graph loss, its
// nodes for a per-node one): where data-parallel training averages gradients across processes,
// weighting each process's batch so that the result is the gradient of the union of the batches.
// In one process there is none (the default), and the step is exactly the single-process step.
using GradientHook =
    std::function<void(const std::vector<at::Tensor>& parameters, double batch_weight)>;

struct StepSettings {
  c10::Device device = c10::Device(c10::kCPU);
  Precision precision = Precision::kFloat32;
  double gradient_clip = 1.0;  // max global L2 norm; 0: no clipping
  LossReduction loss_reduction = LossReduction::kPerGraph;
  // Redo a batch that runs out of memory as micro-batches (training). A probe turns it off: an
  // OOM there means the probe batch does not fit, and must not be measured as a split step.
  bool split_on_oom = true;
};

struct StepOutcome {
  at::Tensor loss;              // the batch's loss, detached, on the device
  std::int64_t parts = 1;       // micro-batches the batch ran as
  std::int64_t oom_events = 0;  // failed attempts in this step
  bool applied = true;          // false: fp16 gradients overflowed and the update was skipped
};

class TrainingStep {
 public:
  // `batches` (for building micro-batches) and `optimizer` must outlive the step; `parameters`
  // are the tensors `optimizer` updates (clipped and unscaled together).
  TrainingStep(const BatchBuilder& batches, std::vector<at::Tensor> parameters,
               torch::optim::Optimizer& optimizer, TaskLoss loss, StepSettings settings);
  // The graph task's step over graphs of `store` (which must outlive it).
  TrainingStep(const store::GraphStore& store, std::vector<at::Tensor> parameters,
               torch::optim::Optimizer& optimizer, BatchLoss loss, StepSettings settings);

  // One step on `host_batch` (built on the host; moved to the device here): gradients are set
  // to none first, so nothing from an earlier step leaks in.
  StepOutcome run(const TaskBatch& host_batch);
  // The graph task's step on graphs collated on the host.
  StepOutcome run(const loader::GraphBatch& host_batch);

  void set_gradient_hook(GradientHook hook) { gradient_hook_ = std::move(hook); }
  DynamicLossScaler& loss_scaler() { return scaler_; }
  const DynamicLossScaler& loss_scaler() const { return scaler_; }
  const std::vector<at::Tensor>& parameters() const { return parameters_; }

 private:
  TrainingStep(std::unique_ptr<const BatchBuilder> batches, std::vector<at::Tensor> parameters,
               torch::optim::Optimizer& optimizer, TaskLoss loss, StepSettings settings);

  std::unique_ptr<const BatchBuilder> owned_batches_;  // the graph task's, when built from a store
  std::vector<at::Tensor> parameters_;
  torch::optim::Optimizer& optimizer_;
  TaskLoss loss_;
  StepSettings settings_;
  DynamicLossScaler scaler_;
  OomGuard guard_;
  GradientHook gradient_hook_;
};

}  // namespace headroom::train
