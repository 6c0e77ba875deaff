#include "headroom/train/evaluation/evaluation_stage.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include "headroom/baseline/store_baseline.hpp"
#include "headroom/eval/decision_threshold.hpp"
#include "headroom/train/batches/batch_sizing.hpp"
#include "headroom/train/context/command_budget.hpp"
#include "headroom/train/context/host_memory.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/fusion/fusion_scoring.hpp"
#include "headroom/train/loop/run_resume.hpp"
#include "headroom/train/loop/training_loop.hpp"
#include "headroom/train/stages/batch_norm_adaptation.hpp"
#include "headroom/train/stages/graph_scores.hpp"
#include "headroom/train/stages/node_anomaly.hpp"
#include "headroom/util/bounded_json.hpp"
#include "headroom/util/file_reader.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/process_role.hpp"

namespace headroom::train {
namespace {

// Teachers, then students, then fusions, then hybrids, each by name: the order the summary reads
// best in.
std::vector<std::filesystem::path> discover_models(const std::filesystem::path& dataset_dir) {
  std::vector<std::filesystem::path> found;
  if (!std::filesystem::is_directory(dataset_dir)) return found;
  for (const auto& entry : std::filesystem::directory_iterator(dataset_dir)) {
    const auto best = entry.path() / "best.pt";
    if (!entry.is_directory() || !std::filesystem::exists(best)) continue;
    found.push_back(entry.path());
  }
  const auto rank = [](const std::filesystem::path& path) {
    const auto name = path.filename().string();
    if (name.rfind("teacher", 0) == 0) return 0;
    if (name.rfind("hybrid", 0) == 0) return 3;
    return name.rfind("fusion", 0) == 0 ? 2 : 1;
  };
  std::sort(found.begin(), found.end(), [&](const auto& a, const auto& b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return a.filename() < b.filename();
  });
  return found;
}

// evaluation.json as an earlier evaluation left it (an empty object when there is none). A file
// that does not parse is an error naming it, never silently replaced.
nlohmann::json read_summary(const std::filesystem::path& file) {
  try {
    // Not blocking on a FIFO, nor reading a device without end (util/file_reader.hpp).
    const auto text = util::read_file_if_present(file);
    if (!text) return nlohmann::json::object();
    auto json = util::parse_json(*text);
    if (!json.is_object()) throw std::runtime_error("not a JSON object");
    return json;
  } catch (const std::exception& e) {
    throw std::runtime_error(
        fmt::format("{}: cannot merge into it ({}); move it away to start a new summary",
                    file.string(), e.what()));
  }
}

// One model's evaluation and the per-graph scores it was made from (in the order of the ids
// evaluated); `adapted_scores` only where the model adapts its scores to each vehicle without
// labels (a fusion, the baseline): the scores of its label-free decisions.
struct ScoredModel {
  eval::ModelEvaluation evaluation;
  std::vector<float> scores;
  std::vector<float> adapted_scores;
  // How the scoring pass's batches were planned (InferenceBatching::info); empty when not.
  nlohmann::json inference_batches = nlohmann::json::object();
};

// A CSV field (RFC 4180): quoted, quotes doubled, when it holds a comma, quote or line break (file
// names may).
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// scores/{model}.csv: one row per graph evaluated, so that a user can audit any decision or try
// another threshold without scoring again.
std::string scores_csv(const store::GraphStore& store, std::span<const std::uint32_t> ids,
                       const ScoredModel& scored) {
  const auto index = store.size_index();
  const auto& metadata = store.metadata();
  std::vector<std::uint32_t> validation(store.validation_ids().begin(),
                                        store.validation_ids().end());
  std::sort(validation.begin(), validation.end());
  std::string out = "graph,split,file,window,label,attack_type,score";
  out += scored.adapted_scores.empty() ? "\n" : ",label_free_score\n";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto g = ids[i];
    const bool validates = std::binary_search(validation.begin(), validation.end(), g);
    out += fmt::format(
        "{},{},{},{},{},{},{:.9g}", g,
        validates ? std::string("validation") : csv_field(metadata.splits.at(index.split[g]).name),
        csv_field(metadata.files.at(index.file[g]).path), index.window[g], index.label[g],
        csv_field(metadata.attack_types.at(index.attack_type[g])), scored.scores[i]);
    if (!scored.adapted_scores.empty()) out += fmt::format(",{:.9g}", scored.adapted_scores[i]);
    out += '\n';
  }
  return out;
}

eval::VehicleCalibration vehicle_calibration(const TrainingConfig& config) {
  return {.normal_windows = static_cast<std::size_t>(config.evaluation.vehicle_calibration_windows),
          .target_fpr = config.evaluation.target_fpr,
          .scores = {}};
}

eval::LabelFreeAdaptation label_free_adaptation(const TrainingConfig& config) {
  return {.windows = static_cast<std::size_t>(config.evaluation.label_free_windows),
          .target_fpr = config.evaluation.target_fpr,
          .fence_mads = config.evaluation.label_free_fence_mads,
          .scores = {}};
}

std::string model_name(const std::filesystem::path& path) {
  return std::filesystem::is_directory(path) ? path.filename().string()
                                             : path.parent_path().filename().string();
}

// The checkpoints to evaluate, each once, by their entry names; `origin` says where `sources` came
// from ("--models"). Two checkpoints under one name would share one entry of evaluation.json, the
// second silently replacing the first, and one checkpoint given twice (`--models X,X`, or `X` and
// `./X`, or a link to it) was evaluated once without a word: both refused.
std::vector<std::pair<std::string, std::filesystem::path>> named_checkpoints(
    const std::vector<std::filesystem::path>& sources, std::string_view origin) {
  std::vector<std::pair<std::string, std::filesystem::path>> named;
  std::vector<std::filesystem::path> given;  // each entry of `named` as its source spelled it
  for (const auto& source : sources) {
    const auto checkpoint = resolve_checkpoint_path(source);
    const auto name = model_name(source);
    for (std::size_t i = 0; i < named.size(); ++i) {
      std::error_code unknown;  // a checkpoint that cannot be compared is no duplicate
      if (!std::filesystem::equivalent(named[i].second, checkpoint, unknown)) continue;
      throw std::runtime_error(
          fmt::format("{}: {} and {} are one checkpoint ({}); give each model once", origin,
                      util::printable_path(given[i]), util::printable_path(source),
                      util::printable_path(std::filesystem::weakly_canonical(checkpoint))));
    }
    const auto same = std::find_if(named.begin(), named.end(),
                                   [&](const auto& entry) { return entry.first == name; });
    if (same != named.end())
      throw std::runtime_error(fmt::format(
          "{}: two models named {} ({} and {}) would share one entry of evaluation.json; "
          "evaluate them into different --runs-dir, or rename one run directory",
          origin, util::printable_name(name), util::printable_path(same->second),
          util::printable_path(checkpoint)));
    named.emplace_back(name, checkpoint);
    given.push_back(source);
  }
  return named;
}

// The settings of the per-file decisions and the anomaly score, as the evaluation run's
// config.json records them.
nlohmann::json per_file_decision_settings(const EvaluationOptions& e) {
  return {{"vehicle_calibration", e.vehicle_calibration_windows},
          {"label_free_windows", e.label_free_windows},
          {"label_free_fence", e.label_free_fence_mads},
          {"anomaly_top_nodes", e.anomaly_top_nodes},
          {"label_free_batch_norm", e.label_free_batch_norm}};
}

// What an entry of evaluation.json was measured against: the store's identity and the settings of
// the decisions. Entries of an earlier evaluation against another basis are dropped when merging,
// so that one summary never mixes stores or decision rules.
nlohmann::json evaluation_basis(const TrainingConfig& config, const store::GraphStore& store) {
  auto basis = per_file_decision_settings(config.evaluation);
  basis["store"] = store::content_identity(store.metadata());
  basis["calibration"] = config.evaluation.calibration;
  basis["target_fpr"] = config.evaluation.target_fpr;
  return basis;
}

// Drops the entries of `summary` measured against another basis (or before entries recorded one),
// saying which in the log.
void drop_entries_of_another_basis(nlohmann::json& summary, const nlohmann::json& basis,
                                   RunDirectory& run) {
  std::vector<std::string> dropped;
  for (auto it = summary.begin(); it != summary.end();) {
    if (it->is_object() && it->value("basis", nlohmann::json()) == basis) {
      ++it;
      continue;
    }
    dropped.push_back(util::printable_name(it.key()));
    it = summary.erase(it);
  }
  if (!dropped.empty())
    run.log(fmt::format(
        "evaluation.json: dropped the earlier entries of {}, measured on another store or with "
        "other decision settings",
        fmt::join(dropped, ", ")));
}

// A classifier's attack log-odds, decided at even odds (P(attack) 0.5) and at the threshold its
// stage calibrated (stored as a probability).
std::optional<ScoredModel> evaluate_classifier(
    const TrainingConfig& config, const RunContext& context, const store::GraphStore& store,
    std::span<const std::uint32_t> ids, const std::filesystem::path& checkpoint, std::string name) {
  CheckpointInfo info;
  auto model = load_classifier_checkpoint(checkpoint, context.device, &info);
  require_store_inputs(info.model_config, store, checkpoint);
  InferenceBatching plan;
  const auto scores =
      attack_log_odds_per_graph(*model, store, ids, inference_limits(config, context),
                                context.device, context.precision, &plan);
  std::optional<double> threshold;
  if (info.decision) threshold = eval::log_odds_of_probability(info.decision->threshold);
  auto evaluation =
      eval::evaluate_scores(store, std::move(name), ids, scores, threshold, kEvenOdds,
                            vehicle_calibration(config), label_free_adaptation(config));
  evaluation.score = "attack log-odds";
  return ScoredModel{std::move(evaluation), scores, {}, std::move(plan.info)};
}

// A threshold for a score without a fixed cut (an anomaly score), chosen on the validation split
// (the first store.validation_ids().size() of `ids`) by --calibration (the F1-optimal one by
// default; with --calibration none, the 99th percentile of the normal validation graphs' scores).
// A validation split without attacks falls back to that percentile; one without normal graphs
// either cannot calibrate anything: nullopt, with the reason in the log.
std::optional<double> validation_threshold(const TrainingConfig& config, RunDirectory& run,
                                           const store::GraphStore& store,
                                           std::span<const std::uint32_t> ids,
                                           std::span<const float> scores, const std::string& name) {
  const auto validation = store.validation_ids().size();
  const auto labels = store.size_index().label;
  std::vector<std::uint8_t> validation_labels;
  for (std::size_t i = 0; i < validation; ++i) validation_labels.push_back(labels[ids[i]]);
  const auto validation_scores = scores.first(validation);
  const auto method =
      config.evaluation.calibration == "none" ? "fpr" : config.evaluation.calibration;
  const double target_fpr =
      config.evaluation.calibration == "none" ? 0.01 : config.evaluation.target_fpr;
  for (const auto& [m, fpr] : {std::pair<std::string, double>{method, target_fpr}, {"fpr", 0.01}}) {
    try {
      return eval::calibrate_decision(validation_labels, validation_scores, m, fpr).threshold;
    } catch (const std::invalid_argument& error) {
      run.log(fmt::format("{}: no {} threshold ({})", util::printable_name(name), m, error.what()));
    }
  }
  run.log(fmt::format("{}: not evaluated: its validation split gives no threshold",
                      util::printable_name(name)));
  return std::nullopt;
}

// `scores` with each label-free test file's graphs scored again after the autoencoder's BatchNorm
// statistics were re-estimated on the file's first `learned` adaptation windows (of `windows`,
// labels unread; batch_norm_adaptation.hpp), and put back afterwards.
std::vector<float> batch_norm_adapted_scores(
    const LoadedAutoencoder& autoencoder, const store::GraphStore& store,
    std::span<const std::uint32_t> ids, std::vector<float> scores, std::size_t windows,
    std::size_t learned, std::int64_t batch, const RunContext& context,
    const std::function<std::vector<float>(std::span<const std::uint32_t>)>& score_graphs) {
  const auto file_of = store.size_index().file;
  const BatchNormStatistics trained(*autoencoder.model);
  if (trained.layers() == 0) return scores;
  for (const auto& [file, adaptation] : eval::label_free_adaptation_windows(store, ids, windows)) {
    std::vector<std::size_t> rows;
    std::vector<std::uint32_t> graphs;
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (file_of[ids[i]] == file) {
        rows.push_back(i);
        graphs.push_back(ids[i]);
      }
    adapt_batch_norm(autoencoder, store, std::span(adaptation).first(learned), batch,
                     context.device, context.precision);
    const auto file_scores = score_graphs(graphs);
    trained.restore(*autoencoder.model);
    for (std::size_t k = 0; k < rows.size(); ++k) scores[rows[k]] = file_scores[k];
  }
  return scores;
}

// An autoencoder as a detector: its anomaly score per graph (AutoencoderFamily::graph_scores; the
// VGAE's is its reconstruction error, train/step/losses.hpp, graph_reconstruction_score), decided
// at its validation_threshold.
std::optional<ScoredModel> evaluate_autoencoder(const TrainingConfig& config,
                                                const RunContext& context, RunDirectory& run,
                                                const store::GraphStore& store,
                                                std::span<const std::uint32_t> ids,
                                                const std::filesystem::path& checkpoint,
                                                std::string name) {
  require_store_inputs(read_checkpoint_info(checkpoint).model_config, store, checkpoint);
  const auto autoencoder = load_autoencoder_checkpoint(checkpoint, context.device);
  const auto top_nodes = static_cast<std::size_t>(config.evaluation.anomaly_top_nodes);
  const auto batch = config.optimisation.eval_batch_size;
  const auto limits = inference_limits(config, context);
  std::function<std::vector<float>(std::span<const std::uint32_t>)> score_graphs;
  if (top_nodes == 0) {
    score_graphs = [&](std::span<const std::uint32_t> graphs) {
      return anomaly_scores(autoencoder, store, graphs, limits, context.device, context.precision);
    };
  } else {
    // Node errors are read against the normal validation graphs' nodes of the same identity.
    std::vector<std::uint32_t> normal;
    const auto labels = store.size_index().label;
    for (const auto id : store.validation_ids())
      if (labels[id] == 0) normal.push_back(id);
    if (normal.empty()) {
      run.log(
          fmt::format("{}: not evaluated: no normal validation graph to read node errors "
                      "against (--anomaly-top-nodes 0 scores without them)",
                      util::printable_name(name)));
      return std::nullopt;
    }
    score_graphs = [&, normaliser = fit_node_errors(autoencoder, store, normal, limits,
                                                    context.device, context.precision)](
                       std::span<const std::uint32_t> graphs) {
      return top_node_anomaly_scores(autoencoder, normaliser, store, graphs, top_nodes, limits,
                                     context.device, context.precision);
    };
  }
  const auto scores = score_graphs(ids);
  const auto threshold = validation_threshold(config, run, store, ids, scores, name);
  if (!threshold) return std::nullopt;
  auto label_free = label_free_adaptation(config);
  std::vector<float> adapted;
  if (config.evaluation.label_free_batch_norm && label_free.windows > 0) {
    label_free.learned_windows = label_free.windows / 2;
    adapted = batch_norm_adapted_scores(autoencoder, store, ids, scores, label_free.windows,
                                        label_free.learned_windows, batch, context, score_graphs);
    label_free.scores = adapted;
  }
  auto evaluation = eval::evaluate_scores(store, std::move(name), ids, scores, std::nullopt,
                                          *threshold, vehicle_calibration(config), label_free);
  evaluation.score =
      top_nodes == 0
          ? std::string("anomaly score")
          : fmt::format("anomaly score (mean z of the {} most anomalous nodes)", top_nodes);
  return ScoredModel{std::move(evaluation), scores, std::move(adapted)};
}

// The classical baseline's window scores (baseline/store_baseline.hpp), computed at most once per
// evaluation for its own row and for the hybrid fusions, which read them too.
class SharedBaseline {
 public:
  SharedBaseline(const TrainingConfig& config, RunDirectory& run, const store::GraphStore& store,
                 std::span<const std::uint32_t> ids)
      : config_(config), run_(run), store_(store), ids_(ids) {}

  // The scores of the evaluated ids, label-free and label-picked ones adapted by
  // baseline_adaptation;
  // null when the store's CAN files cannot be read back (why_unavailable() says why).
  const baseline::StoreBaseline* scores() {
    if (tried_) return scores_ ? &*scores_ : nullptr;
    tried_ = true;
    try {
      scores_ =
          baseline::score_store_windows(store_, ids_, baseline_adaptation(config_.evaluation));
    } catch (const baseline::BaselineUnavailable& error) {
      why_ = error.what();
      return nullptr;
    }
    run_.log(
        fmt::format("{}: learnt the inter-arrival times of {} CAN IDs and {} ID transitions from "
                    "the training windows' normal frames",
                    kBaselineModel, scores_->profile.ids(), scores_->profile.transitions()));
    return &*scores_;
  }
  const std::string& why_unavailable() const { return why_; }

 private:
  const TrainingConfig& config_;
  RunDirectory& run_;
  const store::GraphStore& store_;
  std::span<const std::uint32_t> ids_;
  bool tried_ = false;
  std::optional<baseline::StoreBaseline> scores_;
  std::string why_;
};

// What the models of one evaluation share: the baseline's scores and the GNN signals of each pair
// of models a fusion reads, each computed once.
struct SharedScores {
  SharedBaseline baseline;
  FusionSignals fusion_signals;
};

// The classical baseline: each window's frames of unknown IDs and mean frame surprise under the
// per-ID inter-arrival times and ID transitions learnt from the training windows, decided like an
// autoencoder's anomaly score; label-free, under a profile that also learnt the first half of each
// test file's adaptation windows, the second half setting the threshold (label-picked: the same
// with the file's calibration windows). nullopt, with the reason in the log, when the store's CAN
// files cannot be read back.
std::optional<ScoredModel> evaluate_baseline(const TrainingConfig& config, RunDirectory& run,
                                             const store::GraphStore& store,
                                             std::span<const std::uint32_t> ids,
                                             SharedBaseline& shared) {
  const auto* baseline = shared.scores();
  if (baseline == nullptr) {
    run.log(fmt::format("{}: not evaluated: {}", kBaselineModel, shared.why_unavailable()));
    return std::nullopt;
  }
  const auto threshold =
      validation_threshold(config, run, store, ids, baseline->scores, std::string(kBaselineModel));
  if (!threshold) return std::nullopt;
  const auto adaptation = baseline_adaptation(config.evaluation);
  auto vehicle = vehicle_calibration(config);
  vehicle.scores = baseline->calibration_scores;
  vehicle.learned_windows = adaptation.calibration_learned_windows;
  auto label_free = label_free_adaptation(config);
  label_free.scores = baseline->label_free_scores;
  label_free.learned_windows = adaptation.learned_windows;
  auto evaluation = eval::evaluate_scores(store, std::string(kBaselineModel), ids, baseline->scores,
                                          std::nullopt, *threshold, vehicle, label_free);
  evaluation.score = "unknown-ID frames + mean frame surprise / 10 (per-ID timing, ID transitions)";
  return ScoredModel{std::move(evaluation), baseline->scores, baseline->label_free_scores};
}

// log(p / (1 - p)) of each fused P(attack), p clamped to [1e-12, 1 - 1e-12].
double fused_log_odds(double p) {
  const double clamped = std::clamp(p, 1e-12, 1.0 - 1e-12);
  return std::log(clamped / (1.0 - clamped));
}
std::vector<float> fused_log_odds(std::vector<float> scores) {
  for (auto& score : scores) score = static_cast<float>(fused_log_odds(score));
  return scores;
}

// A fusion's fused P(attack) as log-odds, decided at 0 (P 0.5) and at the threshold its stage
// calibrated. Log-odds because the per-file decisions read the spread of a file's normal windows,
// which P(attack) squeezes against 0 and 1 (docs/detection.md). A hybrid's label-free threshold,
// like the baseline's, is set on the adaptation windows its baseline did not learn. nullopt, with
// the reason in the log, when a hybrid's baseline cannot be computed.
std::optional<ScoredModel> evaluate_fusion(const TrainingConfig& config, const RunContext& context,
                                           RunDirectory& run, const store::GraphStore& store,
                                           std::span<const std::uint32_t> ids,
                                           const std::filesystem::path& checkpoint,
                                           std::string name, SharedScores& shared) {
  const bool hybrid = is_hybrid_fusion(read_checkpoint_info(checkpoint));
  const baseline::StoreBaseline* baseline = hybrid ? shared.baseline.scores() : nullptr;
  if (hybrid && baseline == nullptr) {
    run.log(fmt::format("{}: not evaluated: it reads the classical baseline's scores: {}",
                        util::printable_name(name), shared.baseline.why_unavailable()));
    return std::nullopt;
  }
  auto fused = fused_attack_scores(checkpoint, store, ids, config, context,
                                   {.signals = &shared.fusion_signals, .baseline = baseline});
  const auto scores = fused_log_odds(std::move(fused.scores));
  const auto vehicle_scores = fused_log_odds(std::move(fused.vehicle));
  auto label_free_scores = fused_log_odds(std::move(fused.label_free));
  std::optional<double> threshold;
  if (fused.info.decision) threshold = fused_log_odds(fused.info.decision->threshold);
  auto vehicle = vehicle_calibration(config);
  vehicle.scores = vehicle_scores;
  auto label_free = label_free_adaptation(config);
  label_free.scores = label_free_scores;
  if (hybrid) {
    const auto adaptation = baseline_adaptation(config.evaluation);
    vehicle.learned_windows = adaptation.calibration_learned_windows;
    label_free.learned_windows = adaptation.learned_windows;
  }
  auto evaluation = eval::evaluate_scores(store, std::move(name), ids, scores, threshold, 0.0,
                                          vehicle, label_free);
  evaluation.score = hybrid ? "fused attack log-odds of the two models and the classical baseline"
                            : "fused attack log-odds";
  evaluation.hybrid = hybrid;
  return ScoredModel{std::move(evaluation), scores, std::move(label_free_scores)};
}

std::optional<ScoredModel> evaluate_model(const TrainingConfig& config, const RunContext& context,
                                          RunDirectory& run, const store::GraphStore& store,
                                          std::span<const std::uint32_t> ids,
                                          const std::filesystem::path& checkpoint, std::string name,
                                          SharedScores& shared) {
  require_trained_on(checkpoint, store::content_identity(store.metadata()), "to be evaluated on");
  const auto kind = read_checkpoint_info(checkpoint).kind;
  if (is_fusion_kind(kind))
    return evaluate_fusion(config, context, run, store, ids, checkpoint, std::move(name), shared);
  if (model_family(kind).role() == FamilyRole::kClassifier)
    return evaluate_classifier(config, context, store, ids, checkpoint, std::move(name));
  return evaluate_autoencoder(config, context, run, store, ids, checkpoint, std::move(name));
}

}  // namespace

EvaluationStageResult run_evaluation_stage(const TrainingConfig& config) {
  TrainingConfig eval_config = config;
  eval_config.stage = kEvaluationStage;
  validate(eval_config);
  const auto store = store::GraphStore::open(config.run.store);
  const auto context = resolve_run_context(config, store, CommandWork::kInference);
  // The models are checked before the run directory is made: a refused list leaves nothing.
  const auto dataset_dir = config.run.runs_dir / dataset_name(config);
  auto sources = config.evaluation.models;
  const bool discovered = sources.empty();
  if (discovered) sources = discover_models(dataset_dir);
  const auto models = named_checkpoints(
      sources, discovered
                   ? fmt::format("the run directories under {}", util::printable_path(dataset_dir))
                   : std::string("--models"));
  if (sources.empty())
    throw std::runtime_error(fmt::format(
        "no trained model under {} (run `headroom curriculum`, `normal` or `autoencoder` first, "
        "or pass --models)",
        dataset_dir.string()));
  RunDirectory run(checked_run_directory(eval_config), /*echo=*/true, config.run.when_locked);

  std::vector<std::uint32_t> ids(store.validation_ids().begin(), store.validation_ids().end());
  ids.insert(ids.end(), store.test_ids().begin(), store.test_ids().end());

  EvaluationStageResult result;
  result.run_dir = run.path();
  // Every model is scored inside the memory budgets, each as its own memory phase.
  apply_command_budgets(config, context, run);
  // Earlier evaluations of other models stay: a model's entry is replaced only by its own.
  nlohmann::json summary = read_summary(run.path() / "evaluation.json");
  const auto basis = evaluation_basis(config, store);
  drop_entries_of_another_basis(summary, basis, run);
  // A model asked for and not evaluated now loses its earlier entry: it no longer holds.
  const auto drop = [&](const std::string& name, const std::string& why) {
    if (summary.erase(name) > 0)
      run.log(fmt::format("evaluation.json: dropped the earlier entry of {} ({})",
                          util::printable_name(name), why));
  };
  SharedScores shared{SharedBaseline(config, run, store, ids),
                      FusionSignals(store, ids, config, context)};
  // Logs, writes and records one model's evaluation; `source` is its checkpoint, or what it is.
  const auto record = [&](ScoredModel& scored, const std::string& source, std::int64_t peak) {
    auto& evaluation = scored.evaluation;
    run.log(fmt::format("\n{} ({})\n{}", util::printable_name(evaluation.model),
                        util::printable_path(source), eval::render_table(evaluation)));
    run.log(fmt::format("{} on {}: tensor {}", util::printable_name(evaluation.model),
                        context.device.str(), phase_peak_text(peak, context.device_budget)));
    nlohmann::json json = evaluation;
    json["checkpoint"] = source;
    json["basis"] = basis;
    json["memory"] = {{"device", context.device.str()},
                      {"peak_tensor_bytes", peak},
                      {"memory_budget", context.device_budget},
                      {"inference_batches", scored.inference_batches}};
    if (util::process_role().writes()) {
      util::write_file_atomically(run.path() / (evaluation.model + ".json"), json.dump(2) + "\n");
      std::filesystem::create_directories(run.path() / "scores");
      util::write_file_atomically(run.path() / "scores" / (evaluation.model + ".csv"),
                                  scores_csv(store, ids, scored));
    }
    summary[evaluation.model] = json;
    result.peak_tensor_bytes[evaluation.model] = peak;
    result.models.push_back(std::move(evaluation));
  };
  for (const auto& [name, checkpoint] : models) {
    std::optional<ScoredModel> scored;
    const auto peak = run_phase(context.device, [&] {
      scored = evaluate_model(config, context, run, store, ids, checkpoint, name, shared);
    });
    check_host_memory(context.host, "evaluating " + name,
                      "lower --eval-batch-size, or raise --host-memory-budget");
    if (scored) {
      record(*scored, checkpoint.string(), peak);
    } else {
      drop(name, "not evaluated now");
    }
  }
  if (config.evaluation.baseline) {
    std::optional<ScoredModel> scored;
    const auto peak = run_phase(context.device, [&] {
      scored = evaluate_baseline(config, run, store, ids, shared.baseline);
    });
    check_host_memory(context.host, "evaluating the baseline", "raise --host-memory-budget");
    if (scored) {
      record(*scored, "per-ID timing and ID transitions of the store's CAN files", peak);
    } else {
      drop(std::string(kBaselineModel), "not evaluated now");
    }
  } else {
    drop(std::string(kBaselineModel), "--no-baseline");
  }
  if (util::process_role().writes())
    util::write_file_atomically(run.path() / "evaluation.json", summary.dump(2) + "\n");
  return result;
}

const StageTraits kEvaluationStage{
    .name = "evaluation",
    .reads = {.calibration = true, .evaluation = true},
    .run_directory_name = [](const TrainingConfig&) { return std::string("evaluation"); },
    // Only an evaluation records it: the other stages' configurations stay as they were, so
    // their runs still resume.
    .record =
        [](nlohmann::json& json, const TrainingConfig& config) {
          json.update(per_file_decision_settings(config.evaluation));
        },
};

const StageDefinition kEvaluationStageDefinition{
    .traits = &kEvaluationStage,
    .run =
        [](const TrainingConfig& config, const LoopHooks&) {
          return StageResult{.run_dir = run_evaluation_stage(config).run_dir, .outcome = {}};
        },
    .trains = false,
    .example =
        "Example: headroom evaluation --store stores/hcrl_sa\n"
        "         headroom evaluation --store stores/hcrl_sa --models "
        "runs/hcrl_sa/student_curriculum_kd",
};

}  // namespace headroom::train
