#include "headroom/train/stages/node_classifier_stage.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

#include "headroom/eval/class_coverage.hpp"
#include "headroom/loader/epoch_order.hpp"
#include "headroom/models/node_model.hpp"
#include "headroom/models/node_model_kind.hpp"
#include "headroom/nn/sparse_adjacency.hpp"
#include "headroom/store/document_tfidf.hpp"
#include "headroom/store/node_graph_store.hpp"
#include "headroom/train/context/command_budget.hpp"
#include "headroom/train/context/node_run_context.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/loop/run_resume.hpp"
#include "headroom/train/stages/node_stage_plan.hpp"
#include "headroom/train/step/node_subgraph_batch.hpp"
#include "headroom/train/step/node_task_batch.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/process_role.hpp"

namespace headroom::train {
namespace {

// What a run on this graph must agree with to resume: the graph's content (its arrays'
// checksums) and how its splits were drawn.
nlohmann::json node_graph_identity(const store::NodeGraphMetadata& metadata) {
  nlohmann::json checksums = nlohmann::json::object();
  for (const auto& [name, array] : metadata.arrays) checksums[name] = array.xxh3;
  return {{"kind", "node-graph"},
          {"nodes", metadata.num_nodes},
          {"edges", metadata.num_edges},
          {"classes", metadata.classes},
          {"validation_fraction", metadata.validation_fraction},
          {"validation_seed", metadata.validation_seed},
          {"arrays", checksums}};
}

// A tensor viewing a mapped store array: no copy, never written (the mapping is read-only).
template <typename T>
at::Tensor view_of(std::span<const T> values, at::ScalarType type) {
  return torch::from_blob(const_cast<T*>(values.data()), {static_cast<std::int64_t>(values.size())},
                          torch::TensorOptions().dtype(type));
}

// The model's initial weights drawn from the run's seed: part of the run's determinism.
models::NodeModel seeded_model(const models::NodeModelConfig& config, std::uint64_t seed) {
  torch::manual_seed(seed);
  return models::make_node_model(config);
}

// The checkpoints' kind: node_gcn, node_gat, node_sgc, ... (each trains in its own run
// directory, named so).
std::string checkpoint_kind(const models::NodeModelConfig& config) {
  return "node_" + config.architecture;
}

// Classes with no training node or few test nodes, named (eval/class_coverage.hpp).
std::vector<std::string> class_coverage_warnings(const store::NodeGraphStore& store) {
  const auto labels_in = [&store](store::NodeSplit split) {
    std::vector<std::int32_t> labels;
    for (const auto node : store.nodes_in(split)) labels.push_back(store.node_label()[node]);
    return labels;
  };
  return eval::class_coverage_warnings(
      store.metadata().classes, labels_in(store::NodeSplit::kTrain),
      labels_in(store::NodeSplit::kTest),
      store::holds_documents_and_words(store) ? "documents" : "nodes");
}

class NodeClassifierStage {
 public:
  explicit NodeClassifierStage(const TrainingConfig& config)
      : config_(config),
        store_(store::NodeGraphStore::open(config.run.store)),
        context_(resolve_node_run_context(config, store_)),
        run_(checked_run_directory(config), /*echo=*/true, config.run.when_locked),
        model_config_(node_model_config(config.model, store_)),
        train_nodes_(store_.nodes_in(store::NodeSplit::kTrain)),
        validation_nodes_(store_.nodes_in(store::NodeSplit::kValidation)),
        validation_ids_(torch::tensor(
            std::vector<std::int64_t>(validation_nodes_.begin(), validation_nodes_.end()),
            torch::kInt64)),
        warnings_(class_coverage_warnings(store_)) {
    if (train_nodes_.empty() || validation_nodes_.empty())
      throw std::runtime_error(fmt::format(
          "{}: the graph has {} training and {} validation nodes; node classification needs both",
          util::printable_path(config.run.store), train_nodes_.size(), validation_nodes_.size()));
    run_.log(
        fmt::format("stage node: {} on {} nodes, {} entries, {} classes; {} training "
                    "and {} validation nodes; identity features as the first layer's {} weight "
                    "rows; device {}, precision {}",
                    describe_node_model(model_config_), store_.num_nodes(), store_.num_edges(),
                    model_config_.num_classes, train_nodes_.size(), validation_nodes_.size(),
                    model_config_.num_nodes, config.run.device, config.run.precision));
    for (const auto& warning : warnings_) run_.log("warning: " + warning);
  }

  NodeStageResult run(const LoopHooks& hooks) {
    // The budgets hold from the first probe, as a graph stage's do: a probe the budget refuses is
    // an answer, never a peak measured over it.
    apply_command_budgets(config_, context_, run_);
    plan_within_budget();
    // Built after the probes, so that they count only their own model (the same weights: the
    // seed is set right before).
    model_ = seeded_model(model_config_, config_.run.seed);
    TrainingTask task = sampled() ? sampled_task() : full_batch_task();
    task.data_identity = node_graph_identity(store_.metadata());
    task.model = model_;
    task.checkpoint.kind = checkpoint_kind(model_config_);
    task.checkpoint.model_config = model_config_;
    task.loss_reduction = LossReduction::kPerNode;
    task.validate = [this] { return validate(); };
    NodeStageResult result;
    result.training.run_dir = run_.path();
    result.mode = plan_.mode();
    if (sampled()) result.parts_per_epoch = plan_.sampled->parts;
    result.training.outcome = run_budgeted_training(config_, context_, run_, task, hooks);
    // Before the best model is loaded: the two never hold memory at once.
    baseline_ = fit_baseline();
    result.evaluation = evaluate_best();
    result.baseline = baseline_;
    result.warnings = warnings_;
    return result;
  }

 private:
  // Rows of hidden activations an inference pass holds at once when training is sampled.
  static constexpr std::int64_t kInferenceRows = 4096;

  bool sampled() const { return plan_.sampled.has_value(); }

  // Full batch: one step per epoch over the whole graph, the loss on the training nodes' rows.
  TrainingTask full_batch_task() {
    TrainingTask task;
    task.batches = std::make_shared<NodeBatchBuilder>(store_);
    // The graph reaches the device inside the budget, before the first epoch.
    task.prepare = [this] { adjacency(); };
    task.plan_epoch = [this](std::int64_t) {
      EpochPlan plan;
      plan.batches = {train_nodes_};
      plan.info = {{"mode", "full-batch"}, {"seed_nodes", train_nodes_.size()}};
      return plan;
    };
    task.loss = [this](const TaskBatch& batch) {
      const auto& seeds = nodes_of(batch);
      const auto logits = model_->forward(adjacency());
      return torch::nn::functional::cross_entropy(logits.index_select(0, seeds.nodes()),
                                                  seeds.labels());
    };
    return task;
  }

  // Sampled: each epoch the epoch order of every node (loader/epoch_order: a function of the
  // run's seed and the epoch only, so that a resumed run draws the same) cut into the plan's
  // parts, one step per part.
  TrainingTask sampled_task() {
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

  // The full batch's step, predicted from probes on induced subgraphs, is held to the memory
  // budget before the first epoch; when it is over, sampled steps sized to the budget are; when
  // even those are over, the stage refuses with the numbers instead of failing inside a step.
  void plan_within_budget() {
    plan_ = plan_node_stage(config_, context_, store_);
    const auto budget_mib = static_cast<double>(context_.device_budget) / (1 << 20);
    run_.log(describe_node_plan(plan_.full_batch, context_.device_budget));
    if (plan_.full_batch_fits()) {
      run_.log("training full-batch: one step per epoch over the whole graph");
      return;
    }
    run_.log(describe_sampled_plan(*plan_.sampled, context_.device_budget));
    if (!plan_.sampled->fits())
      throw std::runtime_error(fmt::format(
          "{}: neither the full-batch step nor even the smallest sampled step fits the memory "
          "budget of {:.0f} MiB ({}). Raise --memory-budget, or train where more memory is free",
          util::printable_path(config_.run.store), budget_mib, over_budget_figures()));
    run_.log(fmt::format(
        "training on sampled subgraphs: the full batch (about {:.0f} MiB) is over the memory "
        "budget of {:.0f} MiB; {} steps per epoch, each on the subgraph of {} random nodes; "
        "validation reads the validation documents' neighbourhood and evaluation the whole graph, "
        "{} "
        "rows at a time",
        plan_.full_batch.predicted_bytes / (1 << 20), budget_mib, plan_.sampled->parts,
        plan_.sampled->nodes_per_part, kInferenceRows));
  }

  // What the refusal rests on: predicted bytes where the probes allowed a fit, else the size of
  // the probe the budget refused.
  std::string over_budget_figures() const {
    const auto& full = plan_.full_batch;
    const auto& sampled = *plan_.sampled;
    const auto full_text = full.samples.size() >= 2
                               ? fmt::format("about {:.0f} MiB", full.predicted_bytes / (1 << 20))
                               : fmt::format("refused on {} nodes", full.refused_nodes.value_or(0));
    const auto sampled_text =
        sampled.fit.samples > 0
            ? fmt::format("about {:.0f} MiB", sampled.floor_bytes / (1 << 20))
            : fmt::format("refused on {} nodes",
                          sampled.refused_parts.empty() ? 0 : sampled.refused_parts.back());
    return fmt::format("full batch: {}; smallest sampled step: {}", full_text, sampled_text);
  }

  // Sampled inference's first blocks: at most kInferenceRows rows and, for a model whose bytes
  // grow with the entries (the GAT's), the entries a sampled step held (without backward or
  // dropout a block costs less than the step that trained on as many).
  models::InferenceBlocks first_inference_blocks() const {
    models::InferenceBlocks blocks{.rows = kInferenceRows};
    if (models::node_model_kind(model_config_.architecture).cost_grows_with_entries())
      blocks.entries =
          std::max<std::int64_t>(1, static_cast<std::int64_t>(plan_.sampled->expected_entries));
    return blocks;
  }

  // Runs `pass` over the current inference blocks; when it runs out of memory (the budget's
  // allocator or the device's), halves them and runs it again, as the OOM guard splits a step,
  // and keeps the smaller blocks for later passes. A pass holds nothing between tries.
  template <typename Pass>
  at::Tensor with_fitting_blocks(Pass pass) {
    if (!inference_blocks_) inference_blocks_ = first_inference_blocks();
    for (;;) {
      try {
        return pass(*inference_blocks_);
      } catch (const c10::OutOfMemoryError& error) {
        auto& blocks = *inference_blocks_;
        if (blocks.rows == 1 && blocks.entries == 1) throw;
        blocks.rows = std::max<std::int64_t>(1, blocks.rows / 2);
        blocks.entries = std::max<std::int64_t>(1, blocks.entries / 2);
        run_.log(
            fmt::format("inference ran out of memory ({}): blocks halved to {} rows and {} entries",
                        error.what_without_backtrace(), blocks.rows, blocks.entries));
      }
    }
  }

  // Logits of every node without autograd: the whole graph's forward, or (sampled) the same in
  // row blocks, whose activations stay within what a sampled step was planned to hold.
  at::Tensor infer(models::NodeModelImpl& model) {
    if (!sampled()) return model.forward(adjacency());
    return with_fitting_blocks([&](const models::InferenceBlocks& blocks) {
      return model.infer_by_row_blocks(adjacency(), blocks);
    });
  }

  // The normalised adjacency: a view of the store's mapping, on the training device when full
  // batches train there (sampled training's inference moves a block's rows at a time).
  const nn::SparseAdjacency& adjacency() {
    if (!adjacency_) {
      nn::SparseAdjacency mapped(view_of(store_.row_offsets(), torch::kInt64),
                                 view_of(store_.column_index(), torch::kInt32),
                                 view_of(store_.edge_weight(), torch::kFloat32),
                                 /*symmetric=*/true);
      adjacency_ = sampled() ? mapped : mapped.to(context_.device);
    }
    return *adjacency_;
  }

  // The nodes' ids and labels as tensors on the device (labels int64).
  std::pair<at::Tensor, at::Tensor> rows_of(const std::vector<std::uint32_t>& nodes) const {
    const auto batch = NodeBatchBuilder(store_).build(nodes, false)->to(context_.device, false);
    const auto& seeds = nodes_of(*batch);
    return {seeds.nodes(), seeds.labels()};
  }

  // Loss and metrics of `logits` on `nodes`.
  // Loss and metrics of `logits` (every node's, or with `rows_only` only those of `nodes`, in
  // their order) on `nodes`.
  std::pair<double, eval::ClassMetrics> score(const at::Tensor& logits,
                                              const std::vector<std::uint32_t>& nodes,
                                              bool rows_only = false) const {
    const auto [ids, labels] = rows_of(nodes);
    const auto rows = rows_only ? logits : logits.index_select(0, ids);
    const double loss = torch::nn::functional::cross_entropy(rows, labels).item<double>();
    const auto predicted = rows.argmax(1).to(torch::kInt32).cpu();
    const auto truth = labels.to(torch::kInt32).cpu();
    const auto count = static_cast<std::size_t>(truth.numel());
    const auto metrics = eval::class_metrics({truth.data_ptr<std::int32_t>(), count},
                                             {predicted.data_ptr<std::int32_t>(), count},
                                             static_cast<std::size_t>(model_config_.num_classes));
    return {loss, metrics};
  }

  // Sampled training validates on the validation nodes' rows alone (their neighbourhood's hidden
  // rows, not the whole graph's); the full batch's validation forward is the next step's first
  // layer (NodeGcnImpl's memo; the GAT's attention graph is kept too), so it stays whole.
  ValidationResult validate() {
    const auto [loss, metrics] =
        sampled() ? score(with_fitting_blocks([this](const models::InferenceBlocks& blocks) {
                            return model_->infer_rows(adjacency(), validation_ids_, blocks);
                          }),
                          validation_nodes_, /*rows_only=*/true)
                  : score(infer(*model_), validation_nodes_);
    ValidationResult result;
    result.loss = loss;
    result.metrics = {{"accuracy", metrics.accuracy}, {"macro_f1", metrics.macro_f1}};
    return result;
  }

  // A text corpus's TF-IDF + logistic-regression baseline. It runs inside the memory budget too;
  // where it does not fit, it is left out rather than losing the model's evaluation to it.
  std::optional<TfidfBaselineResult> fit_baseline() {
    if (!store::holds_documents_and_words(store_)) return std::nullopt;
    try {
      return fit_tfidf_baseline(store_);
    } catch (const c10::OutOfMemoryError& error) {
      run_.log(fmt::format("{}: not scored, out of memory ({})", kTfidfBaselineName,
                           error.what_without_backtrace()));
      return std::nullopt;
    }
  }

  // The best checkpoint on every split with labelled nodes; evaluation.json (written atomically
  // by the writing process) holds them.
  std::map<std::string, eval::ClassMetrics> evaluate_best() {
    // A best.pt copied in from another corpus's run once failed deep inside a sparse product,
    // naming nothing: its own record of the store is checked first.
    require_trained_on(run_.best_checkpoint(), node_graph_identity(store_.metadata()),
                       "to be evaluated on");
    const auto best = models::make_node_model(model_config_);
    load_checkpoint_weights(run_.best_checkpoint(), *best);
    best->to(context_.device);
    best->eval();
    const torch::NoGradGuard no_grad;
    const auto logits = infer(*best);
    std::map<std::string, eval::ClassMetrics> evaluation;
    nlohmann::json splits = nlohmann::json::object();
    for (const auto split :
         {store::NodeSplit::kTrain, store::NodeSplit::kValidation, store::NodeSplit::kTest}) {
      const auto nodes = store_.nodes_in(split);
      if (nodes.empty()) continue;
      const std::string name(store::kNodeSplitNames[static_cast<std::size_t>(split)]);
      const auto [loss, metrics] = score(logits, nodes);
      evaluation[name] = metrics;
      splits[name] = metrics;
      splits[name]["loss"] = loss;
    }
    if (util::process_role().writes()) {
      const auto info = read_checkpoint_info(run_.best_checkpoint());
      nlohmann::json document = {{"task", "node classification"},
                                 {"model", checkpoint_kind(model_config_)},
                                 {"store", config_.run.store.string()},
                                 {"classes", store_.metadata().classes},
                                 {"checkpoint_epoch", info.epoch},
                                 {"training", node_plan_json(plan_)},
                                 {"splits", splits},
                                 {"warnings", warnings_}};
      if (baseline_) document["baseline"] = *baseline_;
      util::write_file_atomically(run_.path() / "evaluation.json", document.dump(2) + "\n");
    }
    if (const auto test = evaluation.find("test"); test != evaluation.end())
      run_.log(fmt::format("test: accuracy {:.4f}, macro-F1 {:.4f} ({} documents)",
                           test->second.accuracy, test->second.macro_f1, test->second.count));
    if (baseline_)
      run_.log(fmt::format("{}: {}", kTfidfBaselineName, describe_tfidf_baseline(*baseline_)));
    return evaluation;
  }

  const TrainingConfig& config_;
  store::NodeGraphStore store_;
  RunContext context_;
  RunDirectory run_;
  models::NodeModelConfig model_config_;
  models::NodeModel model_;
  std::vector<std::uint32_t> train_nodes_;
  std::vector<std::uint32_t> validation_nodes_;
  at::Tensor validation_ids_;  // the same, int64 on the host
  std::vector<std::string> warnings_;
  std::optional<TfidfBaselineResult> baseline_;  // a text corpus's
  NodeStagePlan plan_;
  std::optional<models::InferenceBlocks> inference_blocks_;  // sampled: the blocks that fit
  std::optional<nn::SparseAdjacency> adjacency_;
};

}  // namespace

void apply_node_task_defaults(TrainingConfig& config, const NodeDefaultsGiven& given) {
  config.stage = kNodeStage;
  if (!given.preset) config.model.family = "gcn";
  if (!given.max_epochs) config.optimisation.max_epochs = 200;
  if (!given.weight_decay) config.optimisation.weight_decay = 0;
  if (!given.gradient_clip) config.optimisation.gradient_clip = 0;
}

NodeStageResult run_node_classifier_stage(const TrainingConfig& config, const LoopHooks& hooks) {
  validate(config);
  NodeClassifierStage stage(config);
  return stage.run(hooks);
}

namespace {
void validate_node_stage(const TrainingConfig& config) {
  try {
    models::node_model_kind(config.model.family);
  } catch (const std::invalid_argument& error) {
    throw std::invalid_argument(fmt::format(
        "stage node trains a node model (--node-model; plan: --preset): {}", error.what()));
  }
  if (config.distillation.enabled)
    throw std::invalid_argument("--use-kd is not available for stage node");
}
}  // namespace

const StageTraits kNodeStage{
    .name = "node",
    .default_preset = "gcn",
    .reads = {.model = true, .training = true, .optimiser = true},
    .run_directory_name =
        [](const TrainingConfig& config) { return "node_" + config.model.family; },
    .validate = validate_node_stage,
    .default_learning_rate =
        [](const TrainingConfig& config) {
          return models::node_model_kind(config.model.family).default_learning_rate();
        },
};

const StageDefinition kNodeStageDefinition{
    .traits = &kNodeStage,
    .run = [](const TrainingConfig& config,
              const LoopHooks& hooks) { return run_node_classifier_stage(config, hooks).training; },
};

}  // namespace headroom::train
