#include "headroom/train/step/training_step.hpp"

#include <torch/torch.h>

#include "headroom/train/step/gradient_clipping.hpp"

namespace headroom::train {

TrainingStep::TrainingStep(const store::GraphStore& store, std::vector<at::Tensor> parameters,
                           torch::optim::Optimizer& optimizer, BatchLoss loss,
                           StepSettings settings)
    : parameters_(std::move(parameters)),
      optimizer_(optimizer),
      loss_(std::move(loss)),
      settings_(settings),
      scaler_(settings.precision == Precision::kFp16Mixed),
      guard_(store, settings.device, settings.loss_reduction) {}

StepOutcome TrainingStep::run(const loader::GraphBatch& host_batch) {
  optimizer_.zero_grad(/*set_to_none=*/true);
  StepOutcome outcome;
  const auto forward = [&](const loader::GraphBatch& batch) {
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
    const auto value = forward(host_batch.to(settings_.device, /*non_blocking=*/true));
    backward(value);
    outcome.loss = value.detach();
  }
  if (gradient_hook_)
    gradient_hook_(parameters_,
                   static_cast<double>(settings_.loss_reduction == LossReduction::kPerNode
                                           ? host_batch.num_nodes
                                           : host_batch.num_graphs));
  outcome.applied = scaler_.unscale(parameters_);
  if (outcome.applied) {
    if (settings_.gradient_clip > 0) clip_gradient_norm(parameters_, settings_.gradient_clip);
    optimizer_.step();
  }
  scaler_.update(outcome.applied);
  return outcome;
}

}  // namespace headroom::train
