#include "headroom/train/stages/node_task.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <algorithm>
#include <stdexcept>

#include "headroom/loader/epoch_order.hpp"
#include "headroom/store/document_tfidf.hpp"
#include "headroom/train/context/node_run_context.hpp"
#include "headroom/train/stages/node_evaluation.hpp"
#include "headroom/train/step/node_subgraph_batch.hpp"
#include "headroom/train/step/node_task_batch.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::train {

NodeTask::NodeTask(const TrainingConfig& config)
    : config_(config),
      store_(store::NodeGraphStore::open(config.run.store)),
      context_(resolve_node_run_context(config, store_)),
      model_config_(node_model_config(config.model, store_)),
      train_nodes_(store_.nodes_in(store::NodeSplit::kTrain)),
      validation_nodes_(store_.nodes_in(store::NodeSplit::kValidation)),
      validation_ids_(torch::tensor(
          std::vector<std::int64_t>(validation_nodes_.begin(), validation_nodes_.end()),
          torch::kInt64)),
      warnings_(node_class_coverage_warnings(store_)) {
  if (train_nodes_.empty() || validation_nodes_.empty())
    throw std::runtime_error(fmt::format(
        "{}: the graph has {} training and {} validation nodes; node classification needs both",
        util::printable_path(config.run.store), train_nodes_.size(), validation_nodes_.size()));
}

void NodeTask::open(RunDirectory& run) {
  run_ = &run;
  run.log(fmt::format(
      "stage node: {} on {} nodes, {} entries, {} classes; {} training and {} validation nodes; "
      "identity features as the first layer's {} weight rows; device {}, precision {}",
      describe_node_model(model_config_), store_.num_nodes(), store_.num_edges(),
      model_config_.num_classes, train_nodes_.size(), validation_nodes_.size(),
      model_config_.num_nodes, config_.run.device, config_.run.precision));
  for (const auto& warning : warnings_) run.log("warning: " + warning);
}

void NodeTask::plan() {
  plan_ = plan_node_stage(config_, context_, store_);
  log_node_plan_or_refuse(plan_, config_.run.store, NodeInference::kInferenceRows, *run_);
  inference_.emplace(store_, plan_, context_.device, *run_);
}

TrainingTask& NodeTask::training() {
  // Built after the probes, so that they count only their own model; the seed is set right
  // before, so its weights are the run's.
  torch::manual_seed(config_.run.seed);
  model_ = models::make_node_model(model_config_);
  training_ = inference_->sampled() ? sampled_task() : full_batch_task();
  TrainingTask& task = training_;
  task.data_identity = node_graph_identity(store_.metadata());
  task.model = model_;
  task.checkpoint.kind = node_checkpoint_kind(model_config_);
  task.checkpoint.model_config = model_config_;
  task.loss_reduction = LossReduction::kPerNode;
  task.validate = [this] { return validate(); };
  return task;
}

// Full batch: one step per epoch over the whole graph, the loss on the training nodes' rows.
TrainingTask NodeTask::full_batch_task() {
  TrainingTask task;
  task.batches = std::make_shared<NodeBatchBuilder>(store_);
  // The graph reaches the device inside the budget, before the first epoch.
  task.prepare = [this] { inference_->adjacency(); };
  task.plan_epoch = [this](std::int64_t) {
    EpochPlan plan;
    plan.batches = {train_nodes_};
    plan.info = {{"mode", "full-batch"}, {"seed_nodes", train_nodes_.size()}};
    return plan;
  };
  task.loss = [this](const TaskBatch& batch) {
    const auto& seeds = nodes_of(batch);
    const auto logits = model_->forward(inference_->adjacency());
    return torch::nn::functional::cross_entropy(logits.index_select(0, seeds.nodes()),
                                                seeds.labels());
  };
  return task;
}

// Sampled: each epoch the epoch order of every node (loader/epoch_order: a function of the run's
// seed and the epoch only, so that a resumed run draws the same) cut into the plan's parts, one
// step per part.
TrainingTask NodeTask::sampled_task() {
  TrainingTask task;
  task.batches = std::make_shared<NodeSubgraphBuilder>(store_);
  task.plan_epoch = [this](std::int64_t epoch) {
    const auto order = loader::epoch_permutation(store_.num_nodes(), config_.run.seed,
                                                 static_cast<std::uint64_t>(epoch),
                                                 loader::OrderStream::kNodeParts);
    EpochPlan plan;
    const auto per_part = static_cast<std::size_t>(plan_.sampled->nodes_per_part);
    plan.batches = loader::chunk(order, per_part);
    // The subgraph builder takes a part's nodes ascending (train/step/node_subgraph_batch).
    for (auto& part : plan.batches) std::sort(part.begin(), part.end());
    plan.info = {{"mode", "sampled"},
                 {"parts", plan.batches.size()},
                 {"nodes_per_part", per_part},
                 {"seed_nodes", train_nodes_.size()}};
    return plan;
  };
  task.loss = [this](const TaskBatch& batch) { return sampled_node_loss(*model_, batch); };
  return task;
}

// Sampled training validates on the validation nodes' rows alone; the full batch's validation
// forward is the next step's first layer, so it stays whole (node_inference.hpp).
ValidationResult NodeTask::validate() {
  const auto score = score_nodes(store_, context_.device, model_config_.num_classes,
                                 inference_->rows(*model_, validation_ids_), validation_nodes_,
                                 /*rows_only=*/true);
  ValidationResult result;
  result.loss = score.loss;
  result.metrics = {{"accuracy", score.metrics.accuracy}, {"macro_f1", score.metrics.macro_f1}};
  return result;
}

void NodeTask::finish(StageResult&) {
  // Before the best model is loaded: the two never hold memory at once.
  baseline_ = fit_baseline();
  evaluation_ =
      evaluate_best_node_model(config_, store_, model_config_, context_.device, *inference_, *run_,
                               {node_plan_json(plan_), warnings_, baseline_});
}

// A text corpus's TF-IDF + logistic-regression baseline. It runs inside the memory budget too;
// where it does not fit, it is left out rather than losing the model's evaluation to it.
std::optional<TfidfBaselineResult> NodeTask::fit_baseline() {
  if (!store::holds_documents_and_words(store_)) return std::nullopt;
  try {
    return fit_tfidf_baseline(store_);
  } catch (const c10::OutOfMemoryError& error) {
    run_->log(fmt::format("{}: not scored, out of memory ({})", kTfidfBaselineName,
                          error.what_without_backtrace()));
    return std::nullopt;
  }
}

NodeStageResult NodeTask::result(const StageResult& trained) const {
  NodeStageResult result;
  result.training = trained;
  result.mode = plan_.mode();
  if (plan_.sampled) result.parts_per_epoch = plan_.sampled->parts;
  result.evaluation = evaluation_;
  result.baseline = baseline_;
  result.warnings = warnings_;
  return result;
}

}  // namespace headroom::train
