// What a stage hands the epoch loop: its model, what its batches are and how an epoch is planned,
// its loss and its validation. The task axis lives here: a graph-classification stage builds
// batches of whole graphs (step/graph_task_batch.hpp), a node-classification one batches of
// nodes of one big graph; the loop (training_loop.hpp) does the rest the same for both.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/step/task_batch.hpp"

namespace headroom::train {

struct EpochPlan {
  // The ids (graphs or seed nodes: the task's BatchBuilder says) of each training batch, in
  // order. In data-parallel training each process takes its share of the list.
  std::vector<std::vector<std::uint32_t>> batches;
  nlohmann::json info = nlohmann::json::object();  // recorded in the epoch's metrics line
};

struct ValidationResult {
  double loss = 0;  // what early stopping minimises
  nlohmann::json metrics = nlohmann::json::object();
};

struct TrainingTask {
  // Builds the batches of `plan_epoch`'s ids, and the OOM guard's micro-batches.
  std::shared_ptr<const BatchBuilder> batches;
  // The identity of the data trained on (a store's content identity): recorded with the run's
  // configuration, so that a run on other data is another run.
  nlohmann::json data_identity;
  std::shared_ptr<torch::nn::Module> model;  // saved as best.pt
  CheckpointInfo checkpoint;                 // kind and model configuration for best.pt
  // Further trained modules (e.g. a distillation projection): optimised and resumed with the
  // model, not part of best.pt.
  std::vector<std::shared_ptr<torch::nn::Module>> auxiliary;
  // Called once, only when there is training to do (not for a finished run), before the memory
  // budget is applied and before the first epoch: where a stage measures its step's memory and
  // builds what its epochs need, outside any epoch's peak. May be empty.
  std::function<void()> prepare;
  // Deterministic in (configuration, epoch): a resumed run must plan the same epochs.
  std::function<EpochPlan(std::int64_t epoch)> plan_epoch;
  // The scalar loss of one batch, already on the training device. Called in training mode,
  // inside autocast when configured.
  TaskLoss loss;
  // How `loss` averages, so that micro-batches after an OOM are weighted right (oom_guard.hpp).
  LossReduction loss_reduction = LossReduction::kPerGraph;
  // Called in eval mode without grad after every epoch.
  std::function<ValidationResult()> validate;
};

}  // namespace headroom::train
