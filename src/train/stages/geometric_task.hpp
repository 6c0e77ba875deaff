// Stage `geometric`'s task (geometric_stage.hpp) as a Task (task/task.hpp): the SGMP encoder
// (models/sgmp.hpp) trained on the whole graphs of a geometric store (node positions, path
// counts; docs/store-format.md, "Geometric stores"). Its batches are --batch-size graphs in the
// seeded, resumable epoch order of the other graph stages (loader/epoch_order), collated with
// their positions (step/graph_task_batch.hpp); its loss, validation metric and baseline are
// geometric_target.hpp's: cross-entropy and accuracy for a store without a graph target (trees),
// standardised L1 and MAE for one with a target (QM9). Validation's metric selects the best
// epoch; finish scores the best checkpoint on the validation and test splits beside the baseline
// into evaluation.json. The step is not planned by path counts yet: batches are fixed counts of
// graphs, held to the budget by the driver's OOM guard alone. Not thread-safe.
#pragma once

#include <cstdint>
#include <span>

#include <nlohmann/json.hpp>

#include "geometric_target.hpp"
#include "headroom/models/sgmp.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/task/task.hpp"

namespace headroom::train::detail {

class GeometricTask final : public Task {
 public:
  // Opens config.run.store; refuses (std::runtime_error naming it) a store without node
  // positions, without training or validation graphs, or, without a target, with one class.
  // Then seeds torch with the run's seed and builds the model. `config` outlives this.
  explicit GeometricTask(const TrainingConfig& config);

  const RunContext& context() const override { return context_; }
  // Logs what the stage trains: the store, graphs per split, paths per graph, model, device.
  void open(RunDirectory& run) override;
  // Nothing planned: batches are --batch-size graphs (planning by path counts is to come).
  void plan() override {}
  TrainingTask& training() override;
  // Scores the best checkpoint on the validation and test splits, each beside its baseline, into
  // evaluation.json.
  void finish(StageResult& trained) override;

 private:
  EpochPlan plan_epoch(std::int64_t epoch) const;
  ValidationResult validate();
  nlohmann::json model_config() const;
  void write_evaluation(const nlohmann::json& splits) const;

  const TrainingConfig& config_;
  store::GraphStore store_;
  RunContext context_;
  GeometricTarget target_;
  std::span<const std::uint32_t> train_ids_;
  std::span<const std::uint32_t> validation_ids_;
  std::span<const std::uint32_t> test_ids_;
  models::SgmpOptions options_;
  models::Sgmp model_{nullptr};
  RunDirectory* run_ = nullptr;  // the driver's, from open()
  TrainingTask training_;        // from training()
};

}  // namespace headroom::train::detail
