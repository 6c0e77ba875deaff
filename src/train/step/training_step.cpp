#include "headroom/train/step/training_step.hpp"

#include <torch/torch.h>

#include "headroom/train/step/gradient_clipping.hpp"

namespace headroom::train {

TrainingStep::TrainingStep(const BatchBuilder& batches, std::vector<at::Tensor> parameters,
                           torch::optim::Optimizer& optimizer, TaskLoss loss, StepSettings settings)
    : parameters_(std::move(parameters)),
      optimizer_(optimizer),
      loss_(std::move(loss)),
      settings_(settings),
      scaler_(settings.precision == Precision::kFp16Mixed),
      guard_(batches, settings.device, settings.loss_reduction) {}

TrainingStep::TrainingStep(const store::GraphStore& store, std::vector<at::Tensor> parameters,
                           torch::optim::Optimizer& optimizer, BatchLoss loss,
                           StepSettings settings)
    : TrainingStep(std::make_unique<GraphBatchBuilder>(store), std::move(parameters), optimizer,
                   graph_task_loss(std::move(loss)), settings) {}

TrainingStep::TrainingStep(std::unique_ptr<const BatchBuilder> batches,
                           std::vector<at::Tensor> parameters, torch::optim::Optimizer& optimizer,
                           TaskLoss loss, StepSettings settings)
    : TrainingStep(*batches, std::move(parameters), optimizer, std::move(loss), settings) {
  owned_batches_ = std::move(batches);
}

StepOutcome TrainingStep::run(const loader::GraphBatch& host_batch) {
  return run(GraphTaskBatch(host_batch));
}

StepOutcome TrainingStep::run(const TaskBatch& host_batch) {
  optimizer_.zero_grad(/*set_to_none=*/true);
  StepOutcome outcome;
  const auto forward = [&](const TaskBatch& batch) {
    AutocastScope autocast(settings_.precision, settings_.device);
    return loss_(batch);
  };
  const auto backward = [&](const at::Tensor& value) { scaler_.scale(value).backward(); };
  if (settings_.split_on_oom) {
    const auto guarded = guard_.run(host_batch, forward, backward,
                                    [&] { optimizer_.zero_grad(/*set_to_none=*/true); });
    outcome.loss = guarded.loss;
    outcome.parts = guarded.parts;
    outcome.oom_events = guarded.oom_events;
  } else {
    const auto value = forward(*host_batch.to(settings_.device, /*non_blocking=*/true));
    backward(value);
    outcome.loss = value.detach();
  }
  if (gradient_hook_) gradient_hook_(parameters_, host_batch.loss_weight(settings_.loss_reduction));
  outcome.applied = scaler_.unscale(parameters_);
  if (outcome.applied) {
    if (settings_.gradient_clip > 0) clip_gradient_norm(parameters_, settings_.gradient_clip);
    optimizer_.step();
  }
  scaler_.update(outcome.applied);
  // Nothing reads the gradients past the update: kept until the next step's start, they would
  // hold a parameter-sized tensor through validation and checkpoints.
  optimizer_.zero_grad(/*set_to_none=*/true);
  return outcome;
}

}  // namespace headroom::train
