#include "headroom/train/fusion/fusion_stage.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <algorithm>
#include <cctype>
#include <memory>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "fusion_fit_data.hpp"
#include "fusion_task.hpp"
#include "headroom/eval/decision_threshold.hpp"
#include "headroom/train/context/command_budget.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/fusion/fusion_features.hpp"
#include "headroom/train/fusion/fusion_learner.hpp"
#include "headroom/train/fusion/fusion_scoring.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/process_role.hpp"

namespace headroom::train {
namespace {

// The inputs fused when --fusion-classifier and --fusion-autoencoder are not given: run-directory
// names under runs/{dataset}/.
constexpr std::string_view kDefaultClassifier = "student_curriculum_kd";
constexpr std::string_view kDefaultAutoencoder = "student_autoencoder_kd";

std::filesystem::path source_or_default(const std::filesystem::path& given,
                                        const TrainingConfig& config, std::string_view leaf,
                                        const char* flag) {
  const auto path = given.empty() ? config.run.runs_dir / dataset_name(config) / leaf : given;
  try {
    return std::filesystem::absolute(resolve_checkpoint_path(path));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(fmt::format(
        "{} (stage fusion fuses a trained classifier and autoencoder: train them first, e.g. with "
        "`headroom run`, or pass {})",
        e.what(), flag));
  }
}

FusionSources resolve_sources(const TrainingConfig& config) {
  return {source_or_default(config.fusion.classifier_path, config, kDefaultClassifier,
                            "--fusion-classifier"),
          source_or_default(config.fusion.autoencoder_path, config, kDefaultAutoencoder,
                            "--fusion-autoencoder")};
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

// One fusion run: the learner, trained as a task of the epoch loop (fusion_task.hpp) once both
// models have scored the validation split, and then the decision threshold stored in best.pt.
class FusionStage {
 public:
  FusionStage(const TrainingConfig& config, const LoopHooks& hooks)
      : config_(config),
        store_(store::GraphStore::open(config.run.store)),
        context_(resolve_run_context(config, store_, CommandWork::kInference)),
        // Before the run directory: a missing model leaves no directory behind.
        sources_(resolve_sources(config)),
        run_(checked_run_directory(config), /*echo=*/true, config.run.when_locked),
        hooks_(hooks) {}

  StageResult run() {
    TrainingTask task;
    task.data_identity = store::content_identity(store_.metadata());
    // Only when there is training to do: scoring runs both models, inside the budgets, as a phase
    // of its own; then the learner, seeded (its initial weights), as before any epoch.
    task.prepare = [this, &task] {
      scoring_peak_ = run_phase(context_.device, [this] { score(); });
      run_.log(fmt::format("scoring on {}: tensor {}", context_.device.str(),
                           phase_peak_text(scoring_peak_, context_.device_budget)));
      torch::manual_seed(config_.run.seed);
      learner_ = make_fusion_learner(config_.fusion.method,
                                     config_.fusion.with_baseline
                                         ? nlohmann::json{{"state_size", kHybridFusionStateSize}}
                                         : nlohmann::json(nullptr),
                                     learner_options());
      train_fusion_in(task, *learner_, data_, config_.run.seed);
      task.checkpoint = checkpoint_info();
    };
    StageResult result{run_.path(), run_training(config_, context_, run_, task, hooks_)};
    if (result.outcome.already_complete) return result;
    // The stage's peak is its highest phase: scoring both models usually, not the small learner.
    result.outcome.peak_tensor_bytes = std::max(scoring_peak_, result.outcome.peak_tensor_bytes);
    calibrate(result.outcome);
    if (util::process_role().writes()) run_.write_result({{"training", result.outcome}});
    return result;
  }

 private:
  FusionLearnerOptions learner_options() const {
    return {effective_learning_rate(config_), config_.optimisation.weight_decay,
            config_.optimisation.gradient_clip, config_.fusion.gamma};
  }

  void score() {
    auto labels = graph_labels(store_, store_.validation_ids());
    require_both_classes(config_, labels);
    run_.log(fmt::format("stage fusion ({}): {} + {} on {} validation graphs ({} attacks)",
                         config_.fusion.method, util::printable_path(sources_.classifier),
                         util::printable_path(sources_.autoencoder), labels.size(),
                         std::count(labels.begin(), labels.end(), 1)));
    data_ = score_fusion_fit_data(config_, store_, context_, sources_, std::move(labels), run_);
  }

  CheckpointInfo checkpoint_info() const {
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

  // The best epoch's fused scores on the whole validation split give the decision threshold
  // stored in best.pt (the fused score is a probability: without calibration, 0.5 decides).
  void calibrate(const TrainingOutcome& outcome) {
    if (config_.evaluation.calibration == "none" || outcome.best_epoch < 0) return;
    load_checkpoint_weights(run_.best_checkpoint(), learner_->model());
    auto info = checkpoint_info();  // what best.pt holds, with its epoch and loss
    info.epoch = outcome.best_epoch;
    info.validation_loss = outcome.best_validation_loss;
    const auto scores = to_float_vector(learner_->fused_scores(data_.all));
    try {
      info.decision =
          eval::calibrate_decision(data_.validation_labels, scores, config_.evaluation.calibration,
                                   config_.evaluation.target_fpr);
      run_.log(fmt::format("decision threshold {:.4f} ({} on the validation split: F1 {:.4f})",
                           info.decision->threshold, info.decision->method,
                           info.decision->validation.f1));
    } catch (const std::invalid_argument& error) {
      run_.log(fmt::format("decision threshold not calibrated: {}", error.what()));
      info.decision.reset();
    }
    if (util::process_role().writes())
      save_model_checkpoint(run_.best_checkpoint(), learner_->model(), info);
  }

  TrainingConfig config_;
  store::GraphStore store_;
  RunContext context_;  // resolved once, with the store open
  FusionSources sources_;
  RunDirectory run_;
  LoopHooks hooks_;
  FusionFitData data_;                      // scored in the task's prepare
  std::unique_ptr<FusionLearner> learner_;  // built there too
  std::int64_t scoring_peak_ = 0;
};

}  // namespace

StageResult run_fusion_stage(const TrainingConfig& config, const LoopHooks& hooks) {
  TrainingConfig fusion_config = config;
  fusion_config.stage = kFusionStage;
  // Fusion trains for --fusion-epochs on whole splits: the GNN stages' epoch count and batch size
  // mean nothing to it, and kept in its configuration they made `headroom fusion` (which has no
  // --max-epochs) refuse the fusion a `run --max-epochs 1` had trained as "another run". The epoch
  // loop trains for optimisation.max_epochs: here, --fusion-epochs.
  fusion_config.optimisation.max_epochs = config.fusion.max_epochs;
  fusion_config.optimisation.batch_size = OptimisationOptions{}.batch_size;
  validate(fusion_config);
  FusionStage stage(fusion_config, hooks);
  return stage.run();
}

namespace {

// A fusion input's run-directory name: the directory itself, or the one holding a given
// checkpoint file; characters outside [A-Za-z0-9._-] become '_' (the name goes into a path).
std::string fusion_input_name(const std::filesystem::path& given, std::string_view fallback) {
  if (given.empty()) return std::string(fallback);
  auto path = given.lexically_normal();
  if (!path.has_filename()) path = path.parent_path();
  if (path.extension() == ".pt") path = path.parent_path();
  std::string name = path.filename().string();
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  return name.empty() || name == "." || name == ".." ? std::string("input") : name;
}

// fusion_{method}[_{classifier}+{autoencoder}], the inputs named when either is not the default.
std::string fusion_directory_name(const TrainingConfig& config) {
  const auto& fusion = config.fusion;
  const auto classifier = fusion_input_name(fusion.classifier_path, kDefaultClassifier);
  const auto autoencoder = fusion_input_name(fusion.autoencoder_path, kDefaultAutoencoder);
  std::string name = (fusion.with_baseline ? "hybrid_" : "fusion_") + fusion.method;
  if (classifier != kDefaultClassifier || autoencoder != kDefaultAutoencoder)
    name += "_" + classifier + "+" + autoencoder;
  return name;
}

// Only a fusion run records these: the configurations of the other stages stay as they were, so
// their runs still resume.
void record_fusion_options(nlohmann::json& json, const TrainingConfig& config) {
  const auto& fusion = config.fusion;
  json["fusion_method"] = fusion.method;
  json["fusion_classifier"] = fusion.classifier_path.string();
  json["fusion_autoencoder"] = fusion.autoencoder_path.string();
  json["fusion_gamma"] = fusion.gamma;
  json["fusion_holdout"] = fusion.holdout_fraction;
  json["fusion_epochs"] = fusion.max_epochs;
  // Only a hybrid records it: the runs of GNN fusions recorded before it existed still resume.
  if (fusion.with_baseline) json["fusion_with_baseline"] = true;
}

}  // namespace

const StageTraits kFusionStage{
    .name = "fusion",
    .reads = {.optimiser = true, .fusion = true, .calibration = true},
    .run_directory_name = fusion_directory_name,
    .validate = [](const TrainingConfig& config) { config.fusion.validate(); },
    .default_learning_rate = [](const TrainingConfig&) { return 1e-3; },  // upstream's DQN
    .record = record_fusion_options,
};

const StageDefinition kFusionStageDefinition{
    .traits = &kFusionStage,
    .run = run_fusion_stage,
    .example =
        "Example: headroom fusion --store stores/hcrl_sa\n"
        "         headroom fusion --store stores/hcrl_sa --fusion-method logistic "
        "--fusion-classifier runs/hcrl_sa/teacher_curriculum",
};

}  // namespace headroom::train
