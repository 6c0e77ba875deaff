#include "headroom/train/fusion/fusion_stage.hpp"

#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <vector>

#include "headroom/baseline/store_baseline.hpp"
#include "headroom/eval/binary_metrics.hpp"
#include "headroom/eval/decision_threshold.hpp"
#include "headroom/eval/evaluation_report.hpp"
#include "headroom/loader/epoch_order.hpp"
#include "headroom/train/context/command_budget.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/fusion/fusion_features.hpp"
#include "headroom/train/fusion/fusion_learner.hpp"
#include "headroom/train/fusion/fusion_scoring.hpp"
#include "headroom/train/loop/metrics_sink.hpp"
#include "headroom/train/loop/run_resume.hpp"
#include "headroom/util/kill_injection.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/process_role.hpp"

namespace headroom::train {
namespace {

using Clock = std::chrono::steady_clock;

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

// The epoch order of `count` rows (loader/epoch_order) as int64 row indices, for slicing and
// index_select.
at::Tensor row_order(std::int64_t count, std::uint64_t seed, std::int64_t epoch,
                     loader::OrderStream stream) {
  const auto order = loader::epoch_permutation(static_cast<std::uint64_t>(count), seed,
                                               static_cast<std::uint64_t>(epoch), stream);
  return torch::tensor(std::vector<std::int64_t>(order.begin(), order.end()), torch::kLong);
}

// Each epoch draws from its own generator, so that a resumed epoch draws what it would have.
at::Generator epoch_generator(std::uint64_t seed, std::int64_t epoch) {
  return at::make_generator<at::CPUGeneratorImpl>(seed * 1000003ULL +
                                                  static_cast<std::uint64_t>(epoch) + 1);
}

struct FusionLoopState {
  std::int64_t epochs_done = 0;
  std::int64_t best_epoch = -1;
  double best_loss = std::numeric_limits<double>::infinity();
  std::int64_t bad_epochs = 0;
  nlohmann::json best_metrics = nlohmann::json::object();
};

class FusionStage {
 public:
  FusionStage(const TrainingConfig& config, const LoopHooks& hooks)
      : config_(config),
        store_(store::GraphStore::open(config.run.store)),
        context_(resolve_run_context(config, store_, CommandWork::kInference)),
        // Before the run directory: a missing model leaves no directory behind.
        sources_(resolve_sources(config)),
        run_(checked_run_directory(config), /*echo=*/true, config.run.when_locked),
        file_sink_(run_) {
    sinks_.push_back(&file_sink_);
    for (auto* sink : hooks.metrics) sinks_.push_back(sink);
  }

  StageResult run() {
    StageResult result{run_.path(), {}};
    if (auto finished =
            finished_training(config_, run_, store::content_identity(store_.metadata()))) {
      result.outcome = *finished;
      return result;
    }
    // Scoring the validation split runs both models: inside the memory budgets, as a phase.
    apply_command_budgets(config_, context_, run_);
    const auto peak = run_phase(context_.device, [this] { prepare_data(); });
    run_.log(fmt::format("scoring on {}: tensor {}", context_.device.str(),
                         phase_peak_text(peak, context_.device_budget)));
    torch::manual_seed(config_.run.seed);
    learner_ = make_fusion_learner(config_.fusion.method,
                                   config_.fusion.with_baseline
                                       ? nlohmann::json{{"state_size", kHybridFusionStateSize}}
                                       : nlohmann::json(nullptr),
                                   learner_options());
    auto& outcome = result.outcome;
    if (resumable_training(config_, run_)) {
      load_state();
      for (auto* sink : sinks_) sink->rewind(state_.epochs_done);
      outcome.resumed_after = state_.epochs_done;
      run_.log(fmt::format("resuming {} after epoch {}", util::printable_path(run_.path()),
                           state_.epochs_done));
    } else {
      run_.clear();
    }
    record_training_config(config_, run_, store::content_identity(store_.metadata()));
    const auto training_peak = run_phase(context_.device, [&] { train(outcome); });
    // The stage's peak is its highest phase: scoring both models usually, not the small learner.
    outcome.peak_tensor_bytes = std::max(peak, training_peak);
    calibrate();
    if (util::process_role().writes()) run_.write_result({{"training", outcome}});
    return result;
  }

 private:
  FusionLearnerOptions learner_options() const {
    return {effective_learning_rate(config_), config_.optimisation.weight_decay,
            config_.optimisation.gradient_clip, config_.fusion.gamma};
  }

  // Scores every validation graph with both models and splits them into fitting and held-out
  // graphs; the scaling comes from the fitting graphs only.
  void prepare_data() {
    const auto ids = store_.validation_ids();
    validation_labels_ = graph_labels(store_, ids);
    std::int64_t attacks = 0;
    for (const auto label : validation_labels_) attacks += label;
    const auto graphs = static_cast<std::int64_t>(ids.size());
    if (attacks == 0 || attacks == graphs)
      throw FusionUnavailable(fmt::format(
          "{}: stage fusion needs normal and attack graphs in the validation split ({} of {} are "
          "attacks)",
          util::printable_path(config_.run.store), attacks, graphs));
    run_.log(fmt::format("stage fusion ({}): {} + {} on {} validation graphs ({} attacks)",
                         config_.fusion.method, util::printable_path(sources_.classifier),
                         util::printable_path(sources_.autoencoder), graphs, attacks));
    signals_ = FusionSignals(store_, ids, config_, context_).of(sources_);
    if (config_.fusion.with_baseline) {
      // Validation windows are outside what the baseline learns from, as they are for the models.
      const auto baseline = baseline::score_store_windows(store_, ids);
      signals_ = with_baseline_signal(signals_, baseline.scores);
      run_.log(fmt::format("hybrid: with the classical baseline's window score ({} CAN IDs)",
                           baseline.profile.ids()));
    }

    // The split is drawn once per run, as epoch 0 of its own stream.
    const at::Tensor order =
        row_order(graphs, config_.run.seed, 0, loader::OrderStream::kFusionSplit);
    const auto held_out = std::clamp<std::int64_t>(
        static_cast<std::int64_t>(config_.fusion.holdout_fraction * static_cast<double>(graphs)), 1,
        graphs - 1);
    const at::Tensor holdout_rows = std::get<0>(order.slice(0, 0, held_out).sort());
    const at::Tensor fit_rows = std::get<0>(order.slice(0, held_out).sort());
    const auto labels_at = [&](const at::Tensor& rows) {
      std::vector<std::uint8_t> labels;
      for (std::int64_t i = 0; i < rows.size(0); ++i)
        labels.push_back(validation_labels_[rows.data_ptr<std::int64_t>()[i]]);
      return labels;
    };
    const auto fit_labels = labels_at(fit_rows);
    holdout_labels_ = labels_at(holdout_rows);
    scaling_ = FusionScaling::fit(signals_.index_select(0, fit_rows), fit_labels);
    all_ = fusion_data(signals_, validation_labels_, scaling_);
    fit_ = all_.rows(fit_rows);
    holdout_ = all_.rows(holdout_rows);
  }

  CheckpointInfo checkpoint_info() const {
    CheckpointInfo info;
    info.kind = std::string(learner_->kind());
    info.model_config = {{"network", learner_->network_config()},
                         {"scaling", scaling_},
                         {"classifier", sources_.classifier.string()},
                         {"autoencoder", sources_.autoencoder.string()}};
    if (config_.fusion.with_baseline) info.model_config["baseline"] = true;
    info.store_identity = store::content_identity(store_.metadata());
    return info;
  }

  void train(TrainingOutcome& outcome) {
    const auto start = Clock::now();
    double train_seconds = 0;
    for (std::int64_t epoch = state_.epochs_done; epoch < config_.fusion.max_epochs; ++epoch) {
      if (state_.bad_epochs >= config_.optimisation.patience) break;
      const auto epoch_start = Clock::now();
      auto generator = epoch_generator(config_.run.seed, epoch);
      const at::Tensor order =
          row_order(fit_.size(), config_.run.seed, epoch, loader::OrderStream::kFusionEpochs);
      const double train_loss = learner_->train_epoch(fit_, order, generator, epoch);
      train_seconds += std::chrono::duration<double>(Clock::now() - epoch_start).count();
      finish_epoch(epoch, train_loss, epoch_start);
    }
    outcome.early_stopped = state_.bad_epochs >= config_.optimisation.patience;
    outcome.epochs = state_.epochs_done;
    outcome.best_epoch = state_.best_epoch;
    outcome.best_validation_loss = state_.best_loss;
    outcome.best_metrics = state_.best_metrics;
    outcome.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const auto trained = (state_.epochs_done - outcome.resumed_after) * fit_.size();
    outcome.graphs_per_second =
        train_seconds > 0 ? static_cast<double>(trained) / train_seconds : 0.0;
  }

  nlohmann::json holdout_metrics(double& loss, std::int64_t epoch) {
    const at::Tensor scores = learner_->fused_scores(holdout_);
    loss = balanced_fusion_loss(scores, holdout_.labels);
    require_finite("held-out loss", loss, epoch);
    const auto metrics = eval::binary_metrics(holdout_labels_, to_float_vector(scores));
    nlohmann::json json = {{"f1", metrics.f1},
                           {"precision", metrics.precision},
                           {"recall", metrics.recall},
                           {"roc_auc", metrics.roc_auc}};
    if (const auto w = learner_->classifier_weights(holdout_); w.defined())
      json["mean_classifier_weight"] = w.mean().item<double>();
    return json;
  }

  // As in the training loop (training_loop.cpp): a non-finite loss stops the stage there, named,
  // before a NaN model could become best.pt or its scores reach a metric; last.pt keeps the epoch
  // before.
  void require_finite(const char* name, double value, std::int64_t epoch) {
    if (std::isfinite(value)) return;
    const std::string text = std::isnan(value) ? "NaN" : value > 0 ? "inf" : "-inf";
    run_.log(fmt::format("stopped: the {} is {} in epoch {}", name, text, epoch + 1));
    throw std::runtime_error(fmt::format(
        "fusion diverged: the {} is {} in epoch {} of {} on store {}, at learning rate {}; "
        "stopped at the first non-finite loss{}. Lower --learning-rate or set --gradient-clip",
        name, text, epoch + 1, util::printable_path(run_.path()),
        util::printable_path(config_.run.store), effective_learning_rate(config_),
        state_.epochs_done > 0 ? fmt::format(" (last.pt keeps epoch {})", state_.epochs_done)
                               : std::string()));
  }

  void finish_epoch(std::int64_t epoch, double train_loss, Clock::time_point epoch_start) {
    require_finite("training loss", train_loss, epoch);
    double loss = 0;
    const auto metrics = holdout_metrics(loss, epoch);
    const bool improved = loss < state_.best_loss;
    if (improved) {
      state_.best_loss = loss;
      state_.best_epoch = epoch;
      state_.best_metrics = metrics;
      state_.bad_epochs = 0;
      auto info = checkpoint_info();
      info.epoch = epoch;
      info.validation_loss = loss;
      if (util::process_role().writes())
        save_model_checkpoint(run_.best_checkpoint(), learner_->model(), info);
    } else {
      ++state_.bad_epochs;
    }
    state_.epochs_done = epoch + 1;
    const nlohmann::json line = {
        {"type", "epoch"},
        {"epoch", epoch},
        {"train_loss", train_loss},
        {"validation_loss", loss},
        {"validation", metrics},
        {"best", improved},
        {"graphs", fit_.size()},
        {"seconds", std::chrono::duration<double>(Clock::now() - epoch_start).count()},
        {"learning_rate", effective_learning_rate(config_)}};
    if (util::process_role().writes())
      for (auto* sink : sinks_) sink->record(line);
    run_.log(fmt::format("epoch {:>3}/{}  train loss {:.5f}  held-out loss {:.5f}{}  F1 {:.4f}",
                         epoch + 1, config_.fusion.max_epochs, train_loss, loss,
                         improved ? " *" : "", metrics.at("f1").get<double>()));
    if (util::process_role().writes()) {
      util::arm_kill_while_writing(epoch + 1, run_.state_checkpoint());  // HEADROOM_INJECT_KILL
      save_state();
    }
    util::kill_if_injected_at_epoch_end(epoch + 1);
  }

  void save_state() const {
    torch::serialize::OutputArchive archive;
    torch::serialize::OutputArchive model;
    learner_->model().save(model);
    archive.write("model", model);
    torch::serialize::OutputArchive learner;
    learner_->save_state(learner);
    archive.write("learner", learner);
    const nlohmann::json loop = {{"epochs_done", state_.epochs_done},
                                 {"best_epoch", state_.best_epoch},
                                 {"best_loss", state_.best_loss},
                                 {"bad_epochs", state_.bad_epochs},
                                 {"best_metrics", state_.best_metrics}};
    archive.write("loop", c10::IValue(loop.dump()));
    write_state_owner(archive, config_, store::content_identity(store_.metadata()));
    save_archive_atomically(archive, run_.state_checkpoint());
  }

  // The same checks as a training stage's last.pt (run_resume.hpp): its owner is this run, on
  // this store, with at most --fusion-epochs done, before anything of it is loaded.
  void load_state() {
    const auto file = run_.state_checkpoint();
    auto archive = open_state(file, torch::kCPU);
    const auto loop =
        require_state_owner(archive, file, config_, store::content_identity(store_.metadata()),
                            config_.fusion.max_epochs);
    const auto& best_loss = loop.contains("best_loss") ? loop.at("best_loss") : nlohmann::json();
    if (!(best_loss.is_null() || best_loss.is_number()) || !loop.contains("best_metrics") ||
        !loop.at("best_metrics").is_object())
      throw std::runtime_error(fmt::format(
          "{}: its loop state's \"best_loss\" or \"best_metrics\" is not what headroom writes; "
          "pass --resume false to start this stage over",
          util::printable_path(file)));
    read_state_module(archive, file, "model", learner_->model());
    try {
      torch::serialize::InputArchive learner;
      archive.read("learner", learner);
      learner_->load_state(learner);
    } catch (const c10::Error& e) {
      throw std::runtime_error(fmt::format(
          "{}: its learner state does not fit this run's ({}); pass --resume false to start this "
          "stage over",
          util::printable_path(file), util::printable(e.what_without_backtrace())));
    }
    state_.epochs_done = loop.at("epochs_done").get<std::int64_t>();
    state_.best_epoch = loop.at("best_epoch").get<std::int64_t>();
    state_.best_loss =
        best_loss.is_null() ? std::numeric_limits<double>::infinity() : best_loss.get<double>();
    state_.bad_epochs = loop.at("bad_epochs").get<std::int64_t>();
    state_.best_metrics = loop.at("best_metrics");
  }

  // The best epoch's fused scores on the whole validation split give the decision threshold
  // stored in best.pt (the fused score is a probability: without calibration, 0.5 decides).
  void calibrate() {
    if (config_.evaluation.calibration == "none" || state_.best_epoch < 0) return;
    load_checkpoint_weights(run_.best_checkpoint(), learner_->model());
    auto info = checkpoint_info();  // what best.pt holds, with its epoch and loss
    info.epoch = state_.best_epoch;
    info.validation_loss = state_.best_loss;
    const auto scores = to_float_vector(learner_->fused_scores(all_));
    try {
      info.decision =
          eval::calibrate_decision(validation_labels_, scores, config_.evaluation.calibration,
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
  MetricsFileSink file_sink_;
  std::vector<MetricsSink*> sinks_;
  std::vector<std::uint8_t> validation_labels_;
  std::vector<std::uint8_t> holdout_labels_;
  at::Tensor signals_;
  FusionScaling scaling_;
  FusionData all_, fit_, holdout_;
  std::unique_ptr<FusionLearner> learner_;
  FusionLoopState state_;
};

}  // namespace

StageResult run_fusion_stage(const TrainingConfig& config, const LoopHooks& hooks) {
  TrainingConfig fusion_config = config;
  fusion_config.stage = kFusionStage;
  // Fusion trains for --fusion-epochs on whole splits: the GNN stages' epoch count and batch size
  // mean nothing to it, and kept in its configuration they made `headroom fusion` (which has no
  // --max-epochs) refuse the fusion a `run --max-epochs 1` had trained as "another run".
  fusion_config.optimisation.max_epochs = OptimisationOptions{}.max_epochs;
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
