// What a stage hands the epoch loop: its model, how an epoch is planned, its loss and its
// validation. The loop (training_loop.hpp) does the rest.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/loader/graph_batch.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/step/oom_guard.hpp"

namespace headroom::train {

struct EpochPlan {
  std::vector<std::vector<std::uint32_t>> batches;  // graph ids of each training batch, in order
  nlohmann::json info = nlohmann::json::object();   // recorded in the epoch's metrics line
};

struct ValidationResult {
  double loss = 0;  // what early stopping minimises
  nlohmann::json metrics = nlohmann::json::object();
};

struct TrainingTask {
  const store::GraphStore* store = nullptr;  // not owned; outlives run_training
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
  std::function<at::Tensor(const loader::GraphBatch&)> loss;
  // How `loss` averages, so that micro-batches after an OOM are weighted right (oom_guard.hpp).
  LossReduction loss_reduction = LossReduction::kPerGraph;
  // Called in eval mode without grad after every epoch.
  std::function<ValidationResult()> validate;
};

}  // namespace headroom::train
