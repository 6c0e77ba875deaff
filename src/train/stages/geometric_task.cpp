#include "geometric_task.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

#include "graph_task.hpp"
#include "headroom/loader/epoch_order.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/step/graph_task_batch.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/process_role.hpp"
#include "stage_preconditions.hpp"

namespace headroom::train::detail {
namespace {

// Paths per chunk of SGMP's per-path work: bounds the forward's per-path tensors (a few MB per
// layer at hidden 64) whatever a batch's path count.
constexpr std::int64_t kPathsPerChunk = 16384;

store::GraphStore open_geometric_store(const std::filesystem::path& path) {
  auto store = store::GraphStore::open(path);
  if (store.metadata().position_dimensions == 0)
    throw std::runtime_error(fmt::format(
        "stage geometric: {} has no node positions (not a geometric store); build one with "
        "`headroom generate-trees` or `headroom import-qm9`",
        util::printable_path(path)));
  return store;
}

models::SgmpOptions sgmp_options(const TrainingConfig& config, const store::GraphStore& store,
                                 const GeometricTarget& target) {
  models::SgmpOptions options;
  options.in_features = store.metadata().node_feature_count;
  options.outputs = target.outputs();
  options.hidden = config.model.hidden.value_or(options.hidden);
  options.interactions = config.model.layers.value_or(options.interactions);
  options.max_paths_per_chunk = kPathsPerChunk;
  options.checkpoint_chunks = config.model.gradient_checkpointing == Checkpointing::kOn;
  options.validate();
  return options;
}

// "p50 P, max M": the 3rd-order paths per graph the store's size index records.
std::string describe_paths(const store::GraphStore& store) {
  const auto counts = store.size_index().num_paths;
  std::vector<std::uint32_t> third;
  for (std::size_t g = 2; g < counts.size(); g += 3) third.push_back(counts[g]);
  if (third.empty()) return "not recorded";
  const auto middle = third.begin() + static_cast<std::ptrdiff_t>(third.size() / 2);
  std::nth_element(third.begin(), middle, third.end());
  return fmt::format("p50 {}, max {}", *middle, *std::max_element(third.begin(), third.end()));
}

std::int64_t parameter_count(torch::nn::Module& module) {
  std::int64_t count = 0;
  for (const auto& parameter : module.parameters()) count += parameter.numel();
  return count;
}

}  // namespace

GeometricTask::GeometricTask(const TrainingConfig& config)
    : config_(config),
      store_(open_geometric_store(config.run.store)),
      context_(resolve_run_context(config, store_, CommandWork::kTraining)),
      target_(GeometricTarget::of(store_)),
      train_ids_(store_.train_ids()),
      validation_ids_(store_.validation_ids()),
      test_ids_(store_.test_ids()),
      options_(sgmp_options(config, store_, target_)) {
  require_validation_graphs(store_, validation_ids_.size(), "geometric", "validation graphs");
  torch::manual_seed(config.run.seed);  // the initial weights are part of the run's determinism
  model_ = models::Sgmp(options_);
}

void GeometricTask::open(RunDirectory& run) {
  run_ = &run;
  run.log(fmt::format(
      "stage geometric: SGMP (hidden {}, {} interactions, {} parameters) {} on {}: {} training, "
      "{} validation, {} test graphs; 3rd-order paths per graph {}; batches of {} graphs in "
      "epoch order (not planned by path counts yet: the OOM guard splits a batch that does not "
      "fit); device {}, precision {}",
      options_.hidden, options_.interactions, parameter_count(*model_), target_.describe(),
      util::printable_path(config_.run.store), train_ids_.size(), validation_ids_.size(),
      test_ids_.size(), describe_paths(store_), config_.optimisation.batch_size, config_.run.device,
      config_.run.precision));
}

TrainingTask& GeometricTask::training() {
  fill_whole_graph_training(training_, store_, model_.ptr(), {"sgmp", model_config()});
  training_.plan_epoch = [this](std::int64_t epoch) { return plan_epoch(epoch); };
  training_.loss = graph_task_loss([this](const loader::GraphBatch& batch) {
    return target_.loss(model_->forward(geometric_batch(batch)), batch);
  });
  training_.validate = [this] { return validate(); };
  return training_;
}

// The training graphs in the epoch's seeded order (a function of the seed and the epoch alone, so
// that a resumed run trains on what the uninterrupted one did), cut into --batch-size graphs.
EpochPlan GeometricTask::plan_epoch(std::int64_t epoch) const {
  EpochPlan plan;
  plan.batches = loader::chunk(
      loader::shuffled(train_ids_, config_.run.seed, static_cast<std::uint64_t>(epoch)),
      static_cast<std::size_t>(config_.optimisation.batch_size));
  plan.info = {{"graphs", train_ids_.size()}, {"batches", plan.batches.size()}};
  return plan;
}

// Early stopping and best.pt follow the validation metric: the error rate (1 - accuracy) or the
// MAE in the target's unit.
ValidationResult GeometricTask::validate() {
  const auto score = score_geometric(model_, store_, validation_ids_, target_,
                                     config_.optimisation.eval_batch_size, context_.device);
  ValidationResult result;
  result.loss = target_.regression ? score.metric : 1.0 - score.metric;
  result.metrics = {{target_.metric_name(), score.metric},
                    {"objective", score.loss},
                    {std::string("baseline_") + target_.metric_name(), score.baseline}};
  return result;
}

void GeometricTask::finish(StageResult&) {
  models::Sgmp best(options_);
  load_checkpoint_weights(run_->best_checkpoint(), *best);
  best->to(context_.device);
  best->eval();
  nlohmann::json splits = nlohmann::json::object();
  for (const auto& [name, ids] : {std::pair{"validation", validation_ids_}, {"test", test_ids_}}) {
    if (ids.empty()) continue;
    const auto score = score_geometric(best, store_, ids, target_,
                                       config_.optimisation.eval_batch_size, context_.device);
    splits[name] = score_json(score, target_);
    run_->log(fmt::format("{}: {} {:.6g} on {} graphs; baseline {:.6g}", name,
                          target_.metric_name(), score.metric, score.graphs, score.baseline));
  }
  if (util::process_role().writes()) write_evaluation(splits);
}

nlohmann::json GeometricTask::model_config() const {
  return {{"hidden", options_.hidden},
          {"interactions", options_.interactions},
          {"in_features", options_.in_features},
          {"outputs", options_.outputs},
          {"cutoff", options_.cutoff},
          {"max_paths_per_chunk", options_.max_paths_per_chunk},
          {"checkpoint_chunks", options_.checkpoint_chunks},
          {"target", target_.to_json()}};
}

void GeometricTask::write_evaluation(const nlohmann::json& splits) const {
  const auto info = read_checkpoint_info(run_->best_checkpoint());
  const nlohmann::json document = {
      {"task", target_.task_name()},
      {"model", "sgmp"},
      {"store", config_.run.store.string()},
      {"target", target_.to_json()},
      {"checkpoint_epoch", info.epoch},
      {"planning", "batches of --batch-size graphs, not planned by path counts"},
      {"splits", splits}};
  util::write_file_atomically(run_->path() / "evaluation.json", document.dump(2) + "\n");
}

}  // namespace headroom::train::detail
