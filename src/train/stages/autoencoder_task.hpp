// The autoencoder task (stage `autoencoder`, autoencoder_stage.hpp) as a Task (task/task.hpp):
// an autoencoder family's model (the VGAE by default, model_family.hpp) trained on the normal
// (attack-free) training graphs of a graph store. Its batches are whole graphs
// (step/graph_task_batch.hpp); its loss is the family's, averaged per node, or with distillation
// the loss against a frozen teacher autoencoder (autoencoder_teacher.hpp): its latent, through a
// jointly trained linear projection, and its reconstruction. Its probes and batch sizing run in the
// training's `prepare` (only when training remains); it validates on the normal validation graphs
// and evaluates nothing itself (stage `evaluation` scores it). Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <torch/nn/modules/linear.h>

#include <ATen/core/Tensor.h>
#include <nlohmann/json.hpp>

#include "autoencoder_teacher.hpp"
#include "graph_task.hpp"
#include "headroom/loader/graph_batch.hpp"
#include "headroom/models/graph_autoencoder.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/batches/batch_sizing.hpp"
#include "headroom/train/batches/inference_batching.hpp"
#include "headroom/train/families/model_family.hpp"

namespace headroom::train::detail {

class AutoencoderTask final : public GraphTask {
 public:
  // Opens config.run.store and resolves the run's context from it, checks that it has normal
  // training and validation graphs and that the model fits the device budget, then seeds torch
  // with the run's seed and builds the model. Throws std::runtime_error or std::invalid_argument
  // saying which. `config` outlives this.
  explicit AutoencoderTask(const TrainingConfig& config);

  const RunContext& context() const override { return context_; }
  // Logs what the stage trains; with distillation, loads the teacher in `run`, then builds the
  // projection onto its latent space (after the teacher, whose loading draws from the generator:
  // the projection's initial weights are then the same in every mode).
  void open(RunDirectory& run) override;
  // Nothing to plan before training: the step is probed in the training's `prepare`.
  void plan() override {}
  TrainingTask& training() override;
  // Nothing to report: the autoencoder is scored by stage `evaluation`.
  void finish(StageResult&) override {}

  // GraphTask (graph_task.hpp): the teacher cache; the normal training graphs.
  void prepare_inputs() override;
  ModelSpec model_spec() const override;
  std::vector<std::uint32_t> training_ids() const override { return train_normals_; }
  ProbeTarget probe_target() override;
  void set_checkpointing(bool on) override;

 private:
  void prepare();
  at::Tensor objective(models::GraphAutoencoderImpl& model, torch::nn::Linear& student_projection,
                       const loader::GraphBatch& batch);
  ValidationResult validate();

  const TrainingConfig& config_;
  store::GraphStore store_;
  RunContext context_;  // resolved once, with the store open
  models::ModelInputs inputs_;
  std::vector<std::uint32_t> train_normals_;
  std::vector<std::uint32_t> validation_normals_;
  const AutoencoderFamily& family_;
  nlohmann::json model_config_;  // the family's configuration, as best.pt records it
  models::GraphAutoencoder model_;
  RunDirectory* run_ = nullptr;                          // the driver's, from open()
  std::optional<AutoencoderTeacher> teacher_;            // with distillation, from open()
  torch::nn::Linear projection_{nullptr};                // with distillation, from open()
  BatchSizing sizing_;                                   // planned in the training's prepare
  std::optional<InferenceBatching> validation_batches_;  // planned at the first validation
  TrainingTask training_;                                // from training()
};

}  // namespace headroom::train::detail
