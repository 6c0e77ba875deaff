#include "headroom/train/stages/classifier_stage.hpp"
#include "headroom/train/step/graph_task_batch.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <cmath>
#include <functional>
#include <optional>
#include <stdexcept>

#include "classifier_teacher.hpp"
#include "headroom/eval/binary_metrics.hpp"
#include "headroom/eval/decision_threshold.hpp"
#include "headroom/loader/epoch_order.hpp"
#include "headroom/train/batches/batch_sizing.hpp"
#include "headroom/train/batches/checkpointing_choice.hpp"
#include "headroom/train/batches/sharded_pass.hpp"
#include "headroom/train/config/curriculum.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/loop/run_resume.hpp"
#include "headroom/train/stages/autoencoder_stage.hpp"
#include "headroom/train/stages/graph_scores.hpp"
#include "headroom/train/stages/prepared_stage.hpp"
#include "headroom/train/step/losses.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/process_role.hpp"
#include "stage_preconditions.hpp"
#include "stage_support.hpp"

namespace headroom::train {
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

// One classifier stage run: what it trains on, its model and (distilled) teacher, and the
// pieces the epoch loop calls (prepare, plan_epoch, loss, validate). Built in the order that
// keeps runs deterministic: seed, model, run directory, teacher.
class ClassifierStage {
 public:
  explicit ClassifierStage(const TrainingConfig& config)
      : config_(config),
        store_(store::GraphStore::open(config.run.store)),
        context_(resolve_run_context(config, store_, CommandWork::kTraining)),
        inputs_(model_inputs(store_)),
        train_ids_(store_.train_ids()),
        attacks_(detail::with_label(store_, train_ids_, 1)),
        normals_(detail::with_label(store_, train_ids_, 0)),
        validation_ids_(store_.validation_ids().begin(), store_.validation_ids().end()),
        family_(classifier_family(config.model.family)),
        curriculum_(config.stage == kCurriculumStage) {
    if (train_ids_.empty())
      throw std::runtime_error(fmt::format("{}: no training graphs", config.run.store.string()));
    detail::require_validation_graphs(store_, validation_ids_.size(), to_string(config.stage),
                                      "validation graphs");
    torch::manual_seed(config.run.seed);  // initial weights are part of the run's determinism
    model_config_ = family_.resolve_config(config.model, inputs_);
    detail::require_model_fits_budget(family_, model_config_, context_, to_string(config.stage));
    model_ = family_.build_classifier(model_config_);
    run_.emplace(checked_run_directory(config), /*echo=*/true, config.run.when_locked);
    run_->log(fmt::format(
        "stage {}: {} {}{} on {} training graphs ({} attack), {} validation, {} identities, {} "
        "node features, device {}, precision {}",
        to_string(config.stage), models::to_string(config.model.size), family_.name(),
        config.distillation.enabled ? " with distillation" : "", train_ids_.size(), attacks_.size(),
        validation_ids_.size(), inputs_.num_ids, inputs_.in_features, config.run.device,
        config.run.precision));
    warn_without_attack_labels();
    if (config.distillation.enabled)
      teacher_.emplace(config_, context_, *run_, store::content_identity(store_.metadata()));
  }

  StageResult run(const LoopHooks& hooks) {
    TrainingTask task;
    task.batches = std::make_shared<GraphBatchBuilder>(store_);
    task.data_identity = store::content_identity(store_.metadata());
    task.model = model_;
    task.checkpoint.kind = std::string(family_.name());
    task.checkpoint.model_config = model_config_;
    // The configuration the checkpoints record is the one prepare() settled (checkpointing).
    task.prepare = [this, &task] {
      prepare();
      task.checkpoint.model_config = model_config_;
    };
    task.plan_epoch = [this](std::int64_t epoch) { return plan_epoch(epoch); };
    task.loss = graph_task_loss(
        [this](const loader::GraphBatch& batch) { return objective(model_, batch); });
    task.validate = [this] { return validate(); };
    StageResult result;
    result.run_dir = run_->path();
    result.outcome = run_training(config_, context_, *run_, task, hooks);
    if (config_.evaluation.calibration != "none") calibrate_decision();
    return result;
  }

  // What the step needs before it can run: the curriculum's difficulty scores and the teacher
  // cache.
  void prepare_inputs() {
    if (curriculum_) score_difficulty();
    if (config_.distillation.enabled && config_.distillation.teacher_cache) {
      std::vector<std::uint32_t> cached_ids(train_ids_.begin(), train_ids_.end());
      cached_ids.insert(cached_ids.end(), validation_ids_.begin(), validation_ids_.end());
      teacher_->build_cache(std::move(cached_ids), store_);
    }
  }

  ModelSpec model_spec() const { return {std::string(family_.name()), model_config_}; }

  // The graphs of epoch 0 (for the curriculum: its first sample), unshuffled.
  std::vector<std::uint32_t> training_ids() const {
    if (!curriculum_) return {train_ids_.begin(), train_ids_.end()};
    return curriculum_epoch(attacks_, normals_, difficulty_, 0, config_.optimisation.max_epochs,
                            config_.curriculum.schedule, config_.run.seed)
        .graph_ids;
  }

  // What the memory probe measures: this stage's step on a fresh model.
  ProbeTarget probe_target() {
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

 private:
  // Unlabelled data (candump logs, attack-free recordings) trains a classifier on one class: it
  // runs, and its numbers mean nothing, so the log says so at the start.
  void warn_without_attack_labels() {
    if (attacks_.empty()) {
      run_->log(fmt::format(
          "WARNING: the training split has no attack labels (all {} graphs are normal): this "
          "classifier has no attack to learn and its scores mean nothing; unlabelled data is for "
          "the autoencoder stage",
          train_ids_.size()));
      return;
    }
    if (detail::with_label(store_, validation_ids_, 1).empty()) {
      run_->log(fmt::format(
          "WARNING: the validation split has no attack labels (all {} graphs are normal): "
          "validation F1 cannot be measured, nor a decision threshold calibrated for F1",
          validation_ids_.size()));
    }
  }

  // The best model's decision threshold, chosen on the validation graphs (which it did not train
  // on) and stored in best.pt. Rewritten only when it changed, so that a finished run rerun leaves
  // best.pt (and the teacher caches keyed on its bytes) as they were.
  // Every rank scores its share of the validation graphs; only the writing process saves.
  void calibrate_decision() {
    const auto best = run_->path() / "best.pt";
    CheckpointInfo info;
    auto model = load_classifier_checkpoint(best, context_.device, &info);
    const auto scores = attack_log_odds_per_graph(*model, store_, validation_ids_,
                                                  inference_limits(config_, context_),
                                                  context_.device, context_.precision);
    const auto labels = store_.size_index().label;
    std::vector<std::uint8_t> validation_labels;
    for (const auto id : validation_ids_) validation_labels.push_back(labels[id]);
    try {
      auto decision = eval::calibrate_decision(
          validation_labels, scores, config_.evaluation.calibration, config_.evaluation.target_fpr);
      const double log_odds = decision.threshold;
      decision.threshold = eval::probability_of_log_odds(log_odds);
      run_->log(fmt::format(
          "decision threshold P(attack) {:.6g}, log-odds {:.4g} ({} on {} validation graphs: F1 "
          "{:.4f}, FPR {:.4f}; at 0.5: F1 {:.4f})",
          decision.threshold, log_odds, decision.method, validation_labels.size(),
          decision.validation.f1, decision.validation.false_positive_rate,
          eval::binary_metrics(validation_labels, scores, kEvenOdds).f1));
      if (info.decision && info.decision->method == decision.method &&
          info.decision->threshold == decision.threshold)
        return;
      info.decision = std::move(decision);
    } catch (const std::invalid_argument& error) {
      run_->log(fmt::format("decision threshold not calibrated: {}", error.what()));
      if (!info.decision) return;
      info.decision.reset();
    }
    if (util::process_role().writes()) save_model_checkpoint(best, *model, info);
  }

  // Only when there is training to do (a finished run skips it): the step's inputs, then its
  // memory fit (measured with the teacher cache).
  void prepare() {
    prepare_inputs();
    // A teacher held on the device during training is outside the step's fit.
    const double reserved = teacher_ ? teacher_->device_bytes() : 0.0;
    const auto choice = choose_checkpointing(reserved);
    // Off: the unchecked step the choice measured is the one that trains.
    const MeasuredPeak* known = choice ? choice->fit_when_off() : nullptr;
    sizing_ = plan_batch_sizing(config_, context_, store_, model_spec(), probe_target(), *run_,
                                reserved, known);
  }

  // --gradient-checkpointing auto, for a family that checkpoints: the planner's choice, applied
  // to the model and its configuration (the checkpoints' and the fit's), before batches are sized.
  std::optional<CheckpointingChoice> choose_checkpointing(double reserved) {
    if (config_.model.gradient_checkpointing != Checkpointing::kAuto ||
        !model_config_.contains("gradient_checkpointing"))
      return std::nullopt;
    model_config_["gradient_checkpointing"] = false;
    const auto choice = choose_gradient_checkpointing(config_, context_, store_, model_spec(),
                                                      probe_target(), reserved);
    model_config_["gradient_checkpointing"] = choice.on;
    model_->set_gradient_checkpointing(choice.on);
    run_->log(choice.describe());
    return choice;
  }

  void score_difficulty() {
    const auto autoencoder_path = autoencoder_for(config_);
    require_trained_on(autoencoder_path, store::content_identity(store_.metadata()),
                       "to score the curriculum's difficulty on");
    const auto autoencoder = load_autoencoder_checkpoint(autoencoder_path, context_.device);
    difficulty_ = anomaly_scores(autoencoder, store_, normals_, inference_limits(config_, context_),
                                 context_.device, context_.precision);
    run_->log(fmt::format("difficulty of {} normal graphs scored with {}", normals_.size(),
                          util::printable_path(autoencoder_path)));
  }

  EpochPlan plan_epoch(std::int64_t epoch) const {
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
  at::Tensor objective(models::GraphClassifier& classifier, const loader::GraphBatch& batch,
                       at::Tensor* logits_out = nullptr) {
    auto logits = classifier->forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs);
    if (logits_out != nullptr) *logits_out = logits;
    if (!config_.distillation.enabled)
      return torch::cross_entropy_loss(logits.to(torch::kFloat), batch.y);
    return gat_distillation_loss(logits.to(torch::kFloat),
                                 teacher_->logits(batch).to(torch::kFloat), batch.y,
                                 config_.distillation.temperature, config_.distillation.alpha);
  }

  // Sharded over the ranks (train/batches/sharded_pass.hpp); the sums are folded in batch order, as
  // one process folds them.
  ValidationResult validate() {
    const auto contributions = contributions_across_ranks(
        store_, validation_ids_, inference_limits(config_, context_), validation_batches_,
        context_.device, [&](const loader::GraphBatch& batch) {
          at::Tensor logits;
          const auto loss = objective(model_, batch, &logits);
          const auto n = static_cast<double>(batch.num_graphs);
          const auto logits32 = logits.to(torch::kFloat);
          const auto p = attack_log_odds(logits32).to(torch::kCPU, torch::kDouble).contiguous();
          const auto y = batch.y.to(torch::kCPU, torch::kDouble).contiguous();
          BatchContribution contribution = {
              loss.item<double>() * n,
              torch::cross_entropy_loss(logits32, batch.y).item<double>() * n};
          contribution.insert(contribution.end(), p.data_ptr<double>(),
                              p.data_ptr<double>() + p.numel());
          contribution.insert(contribution.end(), y.data_ptr<double>(),
                              y.data_ptr<double>() + y.numel());
          return contribution;
        });
    double loss_sum = 0;
    double ce_sum = 0;
    std::vector<std::uint8_t> labels;
    std::vector<float> scores;
    for (const auto& c : contributions) {
      loss_sum += c[0];
      ce_sum += c[1];
      const auto graphs = (c.size() - 2) / 2;
      for (std::size_t i = 0; i < graphs; ++i) {
        scores.push_back(static_cast<float>(c[2 + i]));
        labels.push_back(static_cast<std::uint8_t>(c[2 + graphs + i]));
      }
    }
    ValidationResult result;
    const auto n = static_cast<double>(std::max<std::size_t>(1, labels.size()));
    result.loss = loss_sum / n;
    // A diverged model's scores are NaN, which no metric takes: the epoch loop stops on this loss,
    // naming it and the epoch (training_loop.cpp), instead of "roc_auc: a score is NaN".
    if (!std::isfinite(result.loss)) return result;
    result.metrics = eval::binary_metrics(labels, scores, kEvenOdds);
    result.metrics["loss"] = result.loss;
    result.metrics["cross_entropy"] = ce_sum / n;
    return result;
  }

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
  std::optional<RunDirectory> run_;
  std::vector<float> difficulty_;                        // scored in prepare()
  std::optional<detail::ClassifierTeacher> teacher_;     // with distillation
  BatchSizing sizing_;                                   // planned in prepare()
  std::optional<InferenceBatching> validation_batches_;  // planned at the first validation
};

}  // namespace

std::unique_ptr<PreparedStage> prepare_classifier_stage(const TrainingConfig& config) {
  return detail::prepare<ClassifierStage>(config);
}

StageResult run_classifier_stage(const TrainingConfig& config, const LoopHooks& hooks) {
  validate(config);
  ClassifierStage stage(config);
  return stage.run(hooks);
}

namespace {
void validate_classifier_stage(const TrainingConfig& config) {
  validate_model_stage(config, FamilyRole::kClassifier);
}
constexpr OptionGroups kNormalReads{
    .model = true, .training = true, .optimiser = true, .distillation = true, .calibration = true};
}  // namespace

const StageTraits kNormalStage{
    .name = "normal",
    .default_preset = "gat,teacher",
    .reads = kNormalReads,
    .run_directory_name = model_stage_directory_name,
    .validate = validate_classifier_stage,
};

const StageTraits kCurriculumStage{
    .name = "curriculum",
    .default_preset = "gat,teacher",
    .reads = kNormalReads | OptionGroups{.curriculum = true},
    .run_directory_name = model_stage_directory_name,
    .validate = validate_classifier_stage,
};

const StageDefinition kNormalStageDefinition{
    .traits = &kNormalStage,
    .run = run_classifier_stage,
    .prepare = prepare_classifier_stage,
    .example =
        "Example: headroom normal --store stores/hcrl_sa --preset gat,student --max-epochs 20",
};

const StageDefinition kCurriculumStageDefinition{
    .traits = &kCurriculumStage,
    .run = run_classifier_stage,
    .prepare = prepare_classifier_stage,
    .example =
        "Example: headroom curriculum --store stores/hcrl_sa --preset gat,teacher\n"
        "         headroom curriculum --store stores/hcrl_sa --preset gat,student "
        "--use-kd true --teacher-path runs/hcrl_sa/teacher_curriculum",
};

}  // namespace headroom::train
