// What a stage hands the epoch loop: its model, what its batches are and how an epoch is planned,
// its loss and its validation. The task axis lives here: a graph-classification stage builds
// batches of whole graphs (step/graph_task_batch.hpp), a node-classification one batches of
// nodes of one big graph; the loop (training_loop.hpp) does the rest the same for both.
#pragma once

#include <torch/nn/module.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

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

// What one epoch of a task that trains its epochs itself did.
struct OwnEpochPass {
  double mean_loss = 0;     // what the epoch's "train_loss" records
  std::uint64_t units = 0;  // graphs (or nodes) trained on
  std::int64_t steps = 0;   // optimiser steps taken; 0 when the task does not count them
};

// A task whose epochs are not TrainingSteps over batches: fusion's learners (fusion_learner.hpp)
// bring their own optimiser (AdamW) and, for the DQN, acting, replay and a target network between
// updates, which the loop's step (Adam, one loss per batch, micro-batches after an OOM) cannot
// express without changing what they learn. The loop still owns everything around the epochs:
// validation, early stopping, best.pt, last.pt and resuming, metrics and the kill hooks. Such a
// task trains on the CPU in float32 with its modules where it built them: the loop neither moves
// them, nor maps last.pt elsewhere, nor autocasts. One process; not thread-safe.
class OwnEpochs {
 public:
  virtual ~OwnEpochs() = default;
  // What one id names, for progress and metrics: "graph" or "node".
  virtual const char* unit() const = 0;
  // Trains epoch `epoch` (0-based). Deterministic in (the state save_state writes, epoch), so that
  // a resumed run continues exactly as an uninterrupted one.
  virtual OwnEpochPass train_epoch(std::int64_t epoch) = 0;
  // The task's training state beyond TrainingTask::model (its optimiser, replay memory, counters):
  // written into and read from last.pt.
  virtual void save_state(torch::serialize::OutputArchive& archive) const = 0;
  virtual void load_state(torch::serialize::InputArchive& archive) = 0;
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
  // Called once, only when there is training to do (not for a finished run), inside the memory
  // budget (a probe the budget refuses is an answer, not a peak over it) and before the first
  // epoch, as a memory phase of its own: where a stage measures its step's memory and builds what
  // its epochs need, outside any epoch's peak. It may set `model`, `checkpoint`,
  // `validate` and `own_epochs` (fusion builds its learner there, once both models have scored).
  // May be empty.
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
  // Set for a task that trains its epochs itself (OwnEpochs); `batches`, `plan_epoch`, `loss` and
  // `loss_reduction` are then unused.
  std::shared_ptr<OwnEpochs> own_epochs;
};

}  // namespace headroom::train
