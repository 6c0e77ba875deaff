// What the two tasks on whole graphs of a graph store share: the graph-classification task
// (classifier_task.hpp, stages `normal` and `curriculum`) and the autoencoder's
// (autoencoder_task.hpp, stage `autoencoder`). Both are a GraphTask: a Task (task/task.hpp) that
// also answers what the prepared stage (prepared_stage.hpp) hands the probes. Both resolve their
// model under the run's seed, plan their step before the first epoch (the checkpointing choice,
// then the batches sized by measurement), and fill their TrainingTask's graph side alike. Private
// to the stages wing. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include <torch/nn/module.h>

#include <nlohmann/json.hpp>

#include "headroom/store/graph_store.hpp"
#include "headroom/train/batches/batch_sizing.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_context.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/stages/prepared_stage.hpp"
#include "headroom/train/task/task.hpp"

namespace headroom::train::detail {

class GraphTask : public Task {
 public:
  // Once open() ran: builds what the step needs before it can run (a student's teacher cache, the
  // curriculum's difficulty scores).
  virtual void prepare_inputs() = 0;
  // The trained model's family and its configuration, as best.pt records it.
  virtual ModelSpec model_spec() const = 0;
  // The graphs epoch 0 trains on, unshuffled.
  virtual std::vector<std::uint32_t> training_ids() const = 0;
  // The step the memory probes measure, on fresh modules built from model_spec()'s configuration;
  // its factory refers to this task.
  virtual ProbeTarget probe_target() = 0;
  // Applies the gradient-checkpointing choice to the trained model and to model_spec()'s
  // configuration (the checkpoints' and the fit's). Called only for a family that checkpoints.
  virtual void set_checkpointing(bool on) = 0;
};

// The task `make` builds on a copy of `config`, prepared as drive_task prepares it before its
// first epoch, but not trained: its run directory created and locked, the task opened on it,
// its step's inputs built. Validates `config` first.
using GraphTaskFactory = std::function<std::unique_ptr<GraphTask>(const TrainingConfig&)>;
std::unique_ptr<PreparedStage> prepare_graph_task(const TrainingConfig& config,
                                                  const GraphTaskFactory& make);

// Seeds torch with config.run.seed (initial weights are part of the run's determinism: build the
// model right after), then resolves `family`'s configuration for `inputs` and refuses one whose
// training state exceeds the context's device budget (stage_preconditions.hpp), naming `stage`.
nlohmann::json seeded_model_config(const ModelFamily& family, const TrainingConfig& config,
                                   const models::ModelInputs& inputs, const RunContext& context,
                                   std::string_view stage);

// The task's step planned before the first epoch, only when training remains: with
// --gradient-checkpointing auto and a family that checkpoints, the planner's choice
// (checkpointing_choice.hpp), applied and logged to `run`; then the batch sizing, measured on
// task.probe_target() (the unchecked step's fit reused when off was chosen). `reserved`: device
// bytes outside the step's fit (a teacher held on the device while the student trains).
BatchSizing plan_graph_step(GraphTask& task, const TrainingConfig& config,
                            const store::GraphStore& store, RunDirectory& run, double reserved);

// The graph side of every TrainingTask on whole graphs of `store` (which outlives `training`):
// batches collated by loader::collate (step/graph_task_batch.hpp), the store's content identity,
// and `model` saved as best.pt as `spec` says. Stage `geometric`'s task fills it so too.
void fill_whole_graph_training(TrainingTask& training, const store::GraphStore& store,
                               std::shared_ptr<torch::nn::Module> model, const ModelSpec& spec);

// The graph side of a graph task's TrainingTask, alike in both: batches of whole graphs of
// `store` (which outlives `training`), its content identity, `model` saved as best.pt as
// task.model_spec() says, and `prepare` run before the first epoch, after which best.pt records
// the configuration it settled. The epochs, loss and validation are the task's.
void fill_graph_training(TrainingTask& training, GraphTask& task, const store::GraphStore& store,
                         std::shared_ptr<torch::nn::Module> model, std::function<void()> prepare);

// The graphs a student's teacher output cache holds: the training graphs, then the validation
// graphs (validation runs the distillation objective too).
std::vector<std::uint32_t> teacher_cache_ids(std::span<const std::uint32_t> training,
                                             std::span<const std::uint32_t> validation);

}  // namespace headroom::train::detail
