#include "graph_task.hpp"

#include <torch/torch.h>

#include <optional>
#include <utility>

#include "headroom/train/batches/checkpointing_choice.hpp"
#include "headroom/train/step/graph_task_batch.hpp"
#include "stage_preconditions.hpp"

namespace headroom::train::detail {
namespace {

// A graph task behind PreparedStage. Owns the configuration the task refers to, the task, and the
// run directory it was opened on (created once the task has checked the configuration against
// its store, as drive_task creates it).
class PreparedGraphTask final : public PreparedStage {
 public:
  PreparedGraphTask(const TrainingConfig& config, const GraphTaskFactory& make)
      : config_(config),
        task_(make(config_)),
        run_(checked_run_directory(config_), /*echo=*/true, config_.run.when_locked) {
    task_->open(run_);
    task_->prepare_inputs();
  }
  ModelSpec model() const override { return task_->model_spec(); }
  ProbeTarget probe_target() override { return task_->probe_target(); }
  std::vector<std::uint32_t> training_ids() const override { return task_->training_ids(); }

 private:
  TrainingConfig config_;
  std::unique_ptr<GraphTask> task_;
  RunDirectory run_;
};

}  // namespace

std::unique_ptr<PreparedStage> prepare_graph_task(const TrainingConfig& config,
                                                  const GraphTaskFactory& make) {
  validate(config);
  return std::make_unique<PreparedGraphTask>(config, make);
}

nlohmann::json seeded_model_config(const ModelFamily& family, const TrainingConfig& config,
                                   const models::ModelInputs& inputs, const RunContext& context,
                                   std::string_view stage) {
  torch::manual_seed(config.run.seed);
  auto model_config = family.resolve_config(config.model, inputs);
  require_model_fits_budget(family, model_config, context, stage);
  return model_config;
}

BatchSizing plan_graph_step(GraphTask& task, const TrainingConfig& config,
                            const store::GraphStore& store, RunDirectory& run, double reserved) {
  std::optional<CheckpointingChoice> choice;
  if (config.model.gradient_checkpointing == Checkpointing::kAuto &&
      task.model_spec().config.contains("gradient_checkpointing")) {
    task.set_checkpointing(false);  // the step the choice measures
    choice = choose_gradient_checkpointing(config, task.context(), store, task.model_spec(),
                                           task.probe_target(), reserved);
    task.set_checkpointing(choice->on);
    run.log(choice->describe());
  }
  // Off: the unchecked step the choice measured is the one that trains.
  const MeasuredPeak* known = choice ? choice->fit_when_off() : nullptr;
  return plan_batch_sizing(config, task.context(), store, task.model_spec(), task.probe_target(),
                           run, reserved, known);
}

void fill_whole_graph_training(TrainingTask& training, const store::GraphStore& store,
                               std::shared_ptr<torch::nn::Module> model, const ModelSpec& spec) {
  training.batches = std::make_shared<GraphBatchBuilder>(store);
  training.data_identity = store::content_identity(store.metadata());
  training.model = std::move(model);
  training.checkpoint.kind = spec.family;
  training.checkpoint.model_config = spec.config;
}

void fill_graph_training(TrainingTask& training, GraphTask& task, const store::GraphStore& store,
                         std::shared_ptr<torch::nn::Module> model, std::function<void()> prepare) {
  fill_whole_graph_training(training, store, std::move(model), task.model_spec());
  training.prepare = [&training, &task, prepare = std::move(prepare)] {
    prepare();
    training.checkpoint.model_config = task.model_spec().config;
  };
}

std::vector<std::uint32_t> teacher_cache_ids(std::span<const std::uint32_t> training,
                                             std::span<const std::uint32_t> validation) {
  std::vector<std::uint32_t> ids(training.begin(), training.end());
  ids.insert(ids.end(), validation.begin(), validation.end());
  return ids;
}

}  // namespace headroom::train::detail
