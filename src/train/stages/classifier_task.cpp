#include "classifier_task.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <stdexcept>

#include "classifier_validation.hpp"
#include "headroom/loader/epoch_order.hpp"
#include "headroom/train/config/curriculum.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/loop/run_resume.hpp"
#include "headroom/train/stages/autoencoder_stage.hpp"
#include "headroom/train/stages/graph_scores.hpp"
#include "headroom/train/step/graph_task_batch.hpp"
#include "headroom/train/step/losses.hpp"
#include "headroom/util/printable_text.hpp"
#include "stage_preconditions.hpp"
#include "stage_support.hpp"

namespace headroom::train::detail {
namespace {

// The autoencoder that scores difficulty: --autoencoder-path, else this size's run of the
// autoencoder stage's default family (the distilled one first).
std::filesystem::path autoencoder_for(const TrainingConfig& config) {
  if (!config.curriculum.autoencoder_path.empty())
    return resolve_checkpoint_path(config.curriculum.autoencoder_path);
  TrainingConfig autoencoder = config;
  autoencoder.stage = kAutoencoderStage;
  autoencoder.model.family = kAutoencoderStage.default_family();
  for (const bool kd : {true, false}) {
    autoencoder.distillation.enabled = kd;
    const auto best = run_directory(autoencoder) / "best.pt";
    if (std::filesystem::exists(best)) return best;
  }
  autoencoder.distillation.enabled = false;
  throw std::runtime_error(fmt::format(
      "stage curriculum needs a trained autoencoder: none in {} (run `headroom autoencoder` "
      "first, or pass --autoencoder-path)",
      run_directory(autoencoder).string()));
}

}  // namespace

ClassifierTask::ClassifierTask(const TrainingConfig& config, bool curriculum)
    : config_(config),
      store_(store::GraphStore::open(config.run.store)),
      context_(resolve_run_context(config, store_, CommandWork::kTraining)),
      inputs_(model_inputs(store_)),
      train_ids_(store_.train_ids()),
      attacks_(with_label(store_, train_ids_, 1)),
      normals_(with_label(store_, train_ids_, 0)),
      validation_ids_(store_.validation_ids().begin(), store_.validation_ids().end()),
      family_(classifier_family(config.model.family)),
      curriculum_(curriculum) {
  if (train_ids_.empty())
    throw std::runtime_error(fmt::format("{}: no training graphs", config.run.store.string()));
  require_validation_graphs(store_, validation_ids_.size(), to_string(config.stage),
                            "validation graphs");
  model_config_ = seeded_model_config(family_, config, inputs_, context_, to_string(config.stage));
  model_ = family_.build_classifier(model_config_);
}

void ClassifierTask::open(RunDirectory& run) {
  run_ = &run;
  run.log(fmt::format(
      "stage {}: {} {}{} on {} training graphs ({} attack), {} validation, {} identities, {} "
      "node features, device {}, precision {}",
      to_string(config_.stage), models::to_string(config_.model.size), family_.name(),
      config_.distillation.enabled ? " with distillation" : "", train_ids_.size(), attacks_.size(),
      validation_ids_.size(), inputs_.num_ids, inputs_.in_features, config_.run.device,
      config_.run.precision));
  warn_without_attack_labels();
  if (config_.distillation.enabled)
    teacher_.emplace(config_, context_, run, store::content_identity(store_.metadata()));
}

TrainingTask& ClassifierTask::training() {
  fill_graph_training(training_, *this, store_, model_, [this] { prepare(); });
  training_.plan_epoch = [this](std::int64_t epoch) { return plan_epoch(epoch); };
  training_.loss =
      graph_task_loss([this](const loader::GraphBatch& batch) { return objective(model_, batch); });
  training_.validate = [this] {
    return validate_classifier(store_, validation_ids_, inference_limits(config_, context_),
                               validation_batches_, context_.device,
                               [this](const loader::GraphBatch& batch, at::Tensor* logits) {
                                 return objective(model_, batch, logits);
                               });
  };
  return training_;
}

void ClassifierTask::finish(StageResult&) {
  if (config_.evaluation.calibration != "none")
    calibrate_best_decision(config_, context_, store_, validation_ids_, *run_);
}

void ClassifierTask::prepare_inputs() {
  if (curriculum_) score_difficulty();
  if (config_.distillation.enabled && config_.distillation.teacher_cache)
    teacher_->build_cache(teacher_cache_ids(train_ids_, validation_ids_), store_);
}

ModelSpec ClassifierTask::model_spec() const {
  return {std::string(family_.name()), model_config_};
}

std::vector<std::uint32_t> ClassifierTask::training_ids() const {
  if (!curriculum_) return {train_ids_.begin(), train_ids_.end()};
  return curriculum_epoch(attacks_, normals_, difficulty_, 0, config_.optimisation.max_epochs,
                          config_.curriculum.schedule, config_.run.seed)
      .graph_ids;
}

ProbeTarget ClassifierTask::probe_target() {
  return {[this] {
            auto fresh = family_.build_classifier(model_config_);
            return ProbeSubject{{fresh},
                                [this, fresh](const loader::GraphBatch& batch) mutable {
                                  return objective(fresh, batch);
                                },
                                LossReduction::kPerGraph};
          },
          config_.distillation.enabled ? "distillation" : "plain",
          {},
          "train"};
}

// Unlabelled data (candump logs, attack-free recordings) trains a classifier on one class: it
// runs, and its numbers mean nothing, so the log says so at the start.
void ClassifierTask::warn_without_attack_labels() {
  if (attacks_.empty()) {
    run_->log(fmt::format(
        "WARNING: the training split has no attack labels (all {} graphs are normal): this "
        "classifier has no attack to learn and its scores mean nothing; unlabelled data is for "
        "the autoencoder stage",
        train_ids_.size()));
    return;
  }
  if (with_label(store_, validation_ids_, 1).empty()) {
    run_->log(fmt::format(
        "WARNING: the validation split has no attack labels (all {} graphs are normal): "
        "validation F1 cannot be measured, nor a decision threshold calibrated for F1",
        validation_ids_.size()));
  }
}

// Only when there is training to do (a finished run skips it): the step's inputs, then its
// memory fit (measured with the teacher cache). A teacher held on the device during training is
// outside the step's fit.
void ClassifierTask::prepare() {
  prepare_inputs();
  sizing_ =
      plan_graph_step(*this, config_, store_, *run_, teacher_ ? teacher_->device_bytes() : 0.0);
}

void ClassifierTask::set_checkpointing(bool on) {
  model_config_["gradient_checkpointing"] = on;
  model_->set_gradient_checkpointing(on);
}

void ClassifierTask::score_difficulty() {
  const auto autoencoder_path = autoencoder_for(config_);
  require_trained_on(autoencoder_path, store::content_identity(store_.metadata()),
                     "to score the curriculum's difficulty on");
  const auto autoencoder = load_autoencoder_checkpoint(autoencoder_path, context_.device);
  difficulty_ = anomaly_scores(autoencoder, store_, normals_, inference_limits(config_, context_),
                               context_.device, context_.precision);
  run_->log(fmt::format("difficulty of {} normal graphs scored with {}", normals_.size(),
                        util::printable_path(autoencoder_path)));
}

EpochPlan ClassifierTask::plan_epoch(std::int64_t epoch) const {
  EpochPlan plan;
  std::vector<std::uint32_t> epoch_ids;
  if (curriculum_) {
    auto sample =
        curriculum_epoch(attacks_, normals_, difficulty_, epoch, config_.optimisation.max_epochs,
                         config_.curriculum.schedule, config_.run.seed);
    plan.info = {{"curriculum",
                  {{"ratio", sample.ratio},
                   {"percentile", sample.percentile},
                   {"threshold", sample.threshold},
                   {"hard_normals", sample.hard_normals},
                   {"graphs", sample.graph_ids.size()}}}};
    epoch_ids = std::move(sample.graph_ids);
  } else {
    epoch_ids.assign(train_ids_.begin(), train_ids_.end());
  }
  plan.batches =
      make_batches(sizing_, store_, loader::shuffled(epoch_ids, config_.run.seed, epoch));
  return plan;
}

// The stage's loss for a classifier of this configuration (the trained model, or a probe's
// copy): cross-entropy, or with a teacher the distillation loss. Its logits in *logits_out.
at::Tensor ClassifierTask::objective(models::GraphClassifier& classifier,
                                     const loader::GraphBatch& batch, at::Tensor* logits_out) {
  auto logits = classifier->forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs);
  if (logits_out != nullptr) *logits_out = logits;
  if (!config_.distillation.enabled)
    return torch::cross_entropy_loss(logits.to(torch::kFloat), batch.y);
  return gat_distillation_loss(logits.to(torch::kFloat), teacher_->logits(batch).to(torch::kFloat),
                               batch.y, config_.distillation.temperature,
                               config_.distillation.alpha);
}

}  // namespace headroom::train::detail
