#include "fusion_task.hpp"

#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "headroom/eval/binary_metrics.hpp"
#include "headroom/eval/decision_threshold.hpp"
#include "headroom/loader/epoch_order.hpp"
#include "headroom/train/context/command_budget.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/fusion/fusion_features.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/process_role.hpp"

namespace headroom::train {
namespace {

at::Generator epoch_generator(std::uint64_t seed, std::int64_t epoch) {
  return at::make_generator<at::CPUGeneratorImpl>(seed * 1000003ULL +
                                                  static_cast<std::uint64_t>(epoch) + 1);
}

class FusionEpochs final : public OwnEpochs {
 public:
  FusionEpochs(FusionLearner& learner, const FusionFitData& data, std::uint64_t seed)
      : learner_(learner), data_(data), seed_(seed) {}

  const char* unit() const override { return "graph"; }

  OwnEpochPass train_epoch(std::int64_t epoch) override {
    auto generator = epoch_generator(seed_, epoch);
    const at::Tensor order =
        row_order(data_.fit.size(), seed_, epoch, loader::OrderStream::kFusionEpochs);
    const double loss = learner_.train_epoch(data_.fit, order, generator, epoch);
    // The learners do not count their updates: 0 steps (training_task.hpp).
    return {loss, static_cast<std::uint64_t>(data_.fit.size()), 0};
  }

  void save_state(torch::serialize::OutputArchive& archive) const override {
    learner_.save_state(archive);
  }
  void load_state(torch::serialize::InputArchive& archive) override {
    learner_.load_state(archive);
  }

 private:
  FusionLearner& learner_;
  const FusionFitData& data_;
  std::uint64_t seed_;
};

// The held-out rows' class-balanced BCE (what the best epoch minimises) and metrics. A loss that
// is not finite comes back without metrics: the loop stops there, before a NaN score reaches one.
ValidationResult validate_on_holdout(FusionLearner& learner, const FusionFitData& data) {
  const at::Tensor scores = learner.fused_scores(data.holdout);
  ValidationResult result;
  result.loss = balanced_fusion_loss(scores, data.holdout.labels);
  if (!std::isfinite(result.loss)) return result;
  const auto metrics = eval::binary_metrics(data.holdout_labels, to_float_vector(scores));
  result.metrics = {{"f1", metrics.f1},
                    {"precision", metrics.precision},
                    {"recall", metrics.recall},
                    {"roc_auc", metrics.roc_auc}};
  if (const auto w = learner.classifier_weights(data.holdout); w.defined())
    result.metrics["mean_classifier_weight"] = w.mean().item<double>();
  return result;
}

// Makes `task` the training of `learner` on `data` with the run's `seed`: its model, own epochs and
// validation. Keeps references to `learner` and `data`, which outlive the task. Epoch e visits the
// fitting rows in the epoch order of stream kFusionEpochs and draws every other random number from
// a generator of its own, seeded by (seed, e): a resumed epoch draws what it would have.
void train_fusion_in(TrainingTask& task, FusionLearner& learner, const FusionFitData& data,
                     std::uint64_t seed) {
  // The learner owns its network: the task's pointer shares no ownership (an empty owner).
  task.model =
      std::shared_ptr<torch::nn::Module>(std::shared_ptr<torch::nn::Module>(), &learner.model());
  task.own_epochs = std::make_shared<FusionEpochs>(learner, data, seed);
  task.validate = [&learner, &data] { return validate_on_holdout(learner, data); };
}

// The validation split must hold normal and attack graphs: a fusion is fitted on both.
void require_both_classes(const TrainingConfig& config, std::span<const std::uint8_t> labels) {
  const auto graphs = static_cast<std::int64_t>(labels.size());
  const auto attacks = static_cast<std::int64_t>(std::count(labels.begin(), labels.end(), 1));
  if (attacks == 0 || attacks == graphs)
    throw FusionUnavailable(fmt::format(
        "{}: stage fusion needs normal and attack graphs in the validation split ({} of {} are "
        "attacks)",
        util::printable_path(config.run.store), attacks, graphs));
}

}  // namespace

FusionTask::FusionTask(const TrainingConfig& config, FusionSources sources)
    : config_(config),
      store_(store::GraphStore::open(config.run.store)),
      context_(resolve_run_context(config, store_, CommandWork::kInference)),
      sources_(std::move(sources)) {}

TrainingTask& FusionTask::training() {
  training_.data_identity = store::content_identity(store_.metadata());
  training_.prepare = [this] { prepare(); };
  return training_;
}

// Only when there is training to do: scoring runs both models, inside the budgets, as a phase of
// its own; then the learner, seeded (its initial weights), as before any epoch.
void FusionTask::prepare() {
  scoring_peak_ = run_phase(context_.device, [this] { score(); });
  run_->log(fmt::format("scoring on {}: tensor {}", context_.device.str(),
                        phase_peak_text(scoring_peak_, context_.device_budget)));
  torch::manual_seed(config_.run.seed);
  learner_ = make_fusion_learner(config_.fusion.method,
                                 config_.fusion.with_baseline
                                     ? nlohmann::json{{"state_size", kHybridFusionStateSize}}
                                     : nlohmann::json(nullptr),
                                 learner_options());
  train_fusion_in(training_, *learner_, data_, config_.run.seed);
  training_.checkpoint = checkpoint_info();
}

void FusionTask::score() {
  auto labels = graph_labels(store_, store_.validation_ids());
  require_both_classes(config_, labels);
  run_->log(fmt::format("stage fusion ({}): {} + {} on {} validation graphs ({} attacks)",
                        config_.fusion.method, util::printable_path(sources_.classifier),
                        util::printable_path(sources_.autoencoder), labels.size(),
                        std::count(labels.begin(), labels.end(), 1)));
  data_ = score_fusion_fit_data(config_, store_, context_, sources_, std::move(labels), *run_);
}

void FusionTask::finish(StageResult& trained) {
  auto& outcome = trained.outcome;
  if (outcome.already_complete) return;
  outcome.peak_tensor_bytes = std::max(scoring_peak_, outcome.peak_tensor_bytes);
  calibrate(outcome);
  if (util::process_role().writes()) run_->write_result({{"training", outcome}});
}

FusionLearnerOptions FusionTask::learner_options() const {
  return {effective_learning_rate(config_), config_.optimisation.weight_decay,
          config_.optimisation.gradient_clip, config_.fusion.gamma};
}

CheckpointInfo FusionTask::checkpoint_info() const {
  CheckpointInfo info;
  info.kind = std::string(learner_->kind());
  info.model_config = {{"network", learner_->network_config()},
                       {"scaling", data_.scaling},
                       {"classifier", sources_.classifier.string()},
                       {"autoencoder", sources_.autoencoder.string()}};
  if (config_.fusion.with_baseline) info.model_config["baseline"] = true;
  info.store_identity = store::content_identity(store_.metadata());
  return info;
}

// The best epoch's fused scores on the whole validation split give the decision threshold stored
// in best.pt (the fused score is a probability: without calibration, 0.5 decides).
void FusionTask::calibrate(const TrainingOutcome& outcome) {
  if (config_.evaluation.calibration == "none" || outcome.best_epoch < 0) return;
  load_checkpoint_weights(run_->best_checkpoint(), learner_->model());
  auto info = checkpoint_info();  // what best.pt holds, with its epoch and loss
  info.epoch = outcome.best_epoch;
  info.validation_loss = outcome.best_validation_loss;
  const auto scores = to_float_vector(learner_->fused_scores(data_.all));
  try {
    info.decision =
        eval::calibrate_decision(data_.validation_labels, scores, config_.evaluation.calibration,
                                 config_.evaluation.target_fpr);
    run_->log(fmt::format("decision threshold {:.4f} ({} on the validation split: F1 {:.4f})",
                          info.decision->threshold, info.decision->method,
                          info.decision->validation.f1));
  } catch (const std::invalid_argument& error) {
    run_->log(fmt::format("decision threshold not calibrated: {}", error.what()));
    info.decision.reset();
  }
  if (util::process_role().writes())
    save_model_checkpoint(run_->best_checkpoint(), learner_->model(), info);
}

}  // namespace headroom::train
