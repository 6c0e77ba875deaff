// The graph-classification task (stages `normal` and `curriculum`, classifier_stage.hpp) as a Task
// (task/task.hpp): whole graphs of a graph store, each labelled normal (0) or attack (1),
// classified by a classifier family (model_family.hpp). Its batches are whole graphs
// (step/graph_task_batch.hpp); its loss is cross-entropy, or with distillation the loss against a
// frozen teacher's softened logits (classifier_teacher.hpp); `curriculum` trains each epoch on the
// attack graphs and the normal graphs a trained autoencoder scores hard enough (curriculum.hpp).
// Its probes and batch sizing run in the training's `prepare` (only when training remains); it
// validates and calibrates the best checkpoint's decision threshold on the validation graphs
// (classifier_validation.hpp). Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <ATen/core/Tensor.h>
#include <nlohmann/json.hpp>

#include "classifier_teacher.hpp"
#include "graph_task.hpp"
#include "headroom/loader/graph_batch.hpp"
#include "headroom/models/graph_classifier.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/batches/batch_sizing.hpp"
#include "headroom/train/batches/inference_batching.hpp"
#include "headroom/train/families/model_family.hpp"

namespace headroom::train::detail {

class ClassifierTask final : public GraphTask {
 public:
  // Opens config.run.store and resolves the run's context from it, checks that it has training
  // and validation graphs and that the model fits the device budget, then seeds torch with the
  // run's seed and builds the model (its initial weights are part of the run's determinism).
  // Throws std::runtime_error or std::invalid_argument saying which. `config` outlives this.
  // `curriculum`: epochs follow the curriculum (stage `curriculum`), else plain shuffled epochs
  // (stage `normal`) — said by the stage, which this unit does not include (no include cycle).
  ClassifierTask(const TrainingConfig& config, bool curriculum);

  const RunContext& context() const override { return context_; }
  // Logs what the stage trains and loads the teacher (with distillation) in `run`.
  void open(RunDirectory& run) override;
  // Nothing to plan before training: the step is probed in the training's `prepare`, so a
  // finished run is calibrated without probing.
  void plan() override {}
  TrainingTask& training() override;
  // Calibrates the best checkpoint's decision threshold (unless --calibration none).
  void finish(StageResult& trained) override;

  // GraphTask (graph_task.hpp): the curriculum's difficulty scores and the teacher cache; the
  // graphs of epoch 0 (for the curriculum: its first sample).
  void prepare_inputs() override;
  ModelSpec model_spec() const override;
  std::vector<std::uint32_t> training_ids() const override;
  ProbeTarget probe_target() override;
  void set_checkpointing(bool on) override;

 private:
  void warn_without_attack_labels();
  void prepare();
  void score_difficulty();
  EpochPlan plan_epoch(std::int64_t epoch) const;
  at::Tensor objective(models::GraphClassifier& classifier, const loader::GraphBatch& batch,
                       at::Tensor* logits_out = nullptr);

  const TrainingConfig& config_;
  store::GraphStore store_;
  RunContext context_;  // resolved once, with the store open
  models::ModelInputs inputs_;
  std::span<const std::uint32_t> train_ids_;
  std::vector<std::uint32_t> attacks_;
  std::vector<std::uint32_t> normals_;
  std::vector<std::uint32_t> validation_ids_;
  const ClassifierFamily& family_;
  bool curriculum_;
  nlohmann::json model_config_;
  models::GraphClassifier model_;
  RunDirectory* run_ = nullptr;                          // the driver's, from open()
  std::optional<ClassifierTeacher> teacher_;             // with distillation, from open()
  std::vector<float> difficulty_;                        // scored in prepare()
  BatchSizing sizing_;                                   // planned in prepare()
  std::optional<InferenceBatching> validation_batches_;  // planned at the first validation
  TrainingTask training_;                                // from training()
};

}  // namespace headroom::train::detail
