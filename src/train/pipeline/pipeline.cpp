#include "headroom/train/pipeline/pipeline.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "headroom/baseline/store_baseline.hpp"
#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/train/fusion/fusion_stage.hpp"
#include "headroom/train/loop/stage_observer.hpp"
#include "headroom/train/stages/autoencoder_stage.hpp"
#include "headroom/train/stages/classifier_stage.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::train {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string format_mib(std::int64_t bytes) {
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
}

// An F1 cell: "n/a" where it is undefined (a split without attack labels).
std::string format_f1(double f1) { return std::isnan(f1) ? "n/a" : fmt::format("{:.4f}", f1); }

}  // namespace

PipelineResult run_pipeline(const TrainingConfig& base, const LoopHooks& hooks,
                            const StageObservers& observers, const PipelineStageDone& stage_done) {
  const auto start = std::chrono::steady_clock::now();
  PipelineResult result;
  auto stage_config = [&](const StageDefinition& stage, const std::string& kind,
                          models::ModelSize size, const std::string& teacher) {
    TrainingConfig config = base;
    config.stage = *stage.traits;
    config.model.family = kind;
    config.model.size = size;
    config.distillation.enabled = !teacher.empty();
    config.distillation.teacher_path = teacher.empty()
                                           ? std::filesystem::path{}
                                           : base.run.runs_dir / dataset_name(base) / teacher;
    return config;
  };
  // KD-GAT: each stage trains its default family (the VGAE, the GAT); students distil teachers.
  struct Step {
    const StageDefinition& stage;
    models::ModelSize size;
    std::string teacher;
  };
  using models::ModelSize;
  const std::vector<Step> steps = {
      {kAutoencoderStageDefinition, ModelSize::kTeacher, ""},
      {kCurriculumStageDefinition, ModelSize::kTeacher, ""},
      {kAutoencoderStageDefinition, ModelSize::kStudent, "teacher_autoencoder"},
      {kCurriculumStageDefinition, ModelSize::kStudent, "teacher_curriculum"},
  };
  // Runs one stage under its run-directory name, timed, into result.stages.
  const auto run_stage = [&](const TrainingConfig& config, const StageDefinition& stage) {
    const auto stage_start = std::chrono::steady_clock::now();
    PipelineStage done;
    const auto run_dir = run_directory(config);
    done.name = run_dir.filename().string();
    fmt::print("\n== {} ==\n", done.name);
    // The job's hooks, plus the observers' sinks.
    done.result = observed_stage(observers, done.name, config, run_dir, hooks,
                                 [&](const LoopHooks& all) { return stage.run(config, all); });
    done.wall_seconds = seconds_since(stage_start);
    if (stage_done) stage_done(done);
    result.stages.push_back(std::move(done));
  };
  for (const auto& step : steps)
    run_stage(stage_config(step.stage, std::string(step.stage.traits->default_family()), step.size,
                           step.teacher),
              step.stage);
  // The students' scores fused, by upstream's DQN and by a logistic regression; with the
  // baseline on, also the hybrid: the logistic fusion of the students and the baseline's score.
  struct FusionRun {
    const char* method;
    bool with_baseline;
  };
  for (const auto& [method, with_baseline] :
       {FusionRun{"dqn", false}, FusionRun{"logistic", false}, FusionRun{"logistic", true}}) {
    if (with_baseline && !base.evaluation.baseline) continue;
    TrainingConfig config = base;
    config.stage = kFusionStage;
    config.fusion.method = method;
    config.fusion.with_baseline = with_baseline;
    try {
      run_stage(config, kFusionStageDefinition);
    } catch (const FusionUnavailable& e) {
      fmt::print("skipped: {}\n", e.what());
    } catch (const baseline::BaselineUnavailable& e) {
      fmt::print("skipped: the hybrid reads the classical baseline's scores: {}\n", e.what());
    }
  }
  fmt::print("\n== evaluation ==\n");
  TrainingConfig eval_config = base;
  eval_config.stage = kEvaluationStage;
  eval_config.evaluation.models.clear();
  // The classifiers, the autoencoders as anomaly detectors, and the fusions.
  for (const auto& stage : result.stages)
    eval_config.evaluation.models.push_back(stage.result.run_dir);
  const auto eval_dir = run_directory(eval_config);
  const auto eval_start = std::chrono::steady_clock::now();
  result.evaluation =
      observed_stage(observers, eval_dir.filename().string(), eval_config, eval_dir, {},
                     [&](const LoopHooks&) { return run_evaluation_stage(eval_config); });
  result.evaluation_wall_seconds = seconds_since(eval_start);
  result.wall_seconds = seconds_since(start);
  result.peak_rss_bytes = memory::process_peak_rss_bytes();
  return result;
}

namespace {

// The F1 of a group at the decision a deployment makes: label-free where evaluation ran it, else
// the calibrated threshold, else the model's own (0.5, or the VGAE's validation threshold).
double deployed_f1(const eval::EvaluationGroup& group) {
  if (group.label_free) return group.label_free->f1;
  if (group.calibrated) return group.calibrated->f1;
  return group.metrics.f1;
}

const eval::EvaluationGroup* whole_split(const eval::ModelEvaluation& model,
                                         const std::string& split) {
  for (const auto& group : model.groups)
    if (group.split == split && group.attack_type.empty()) return &group;
  return nullptr;
}

// The attack types of a test split, each marked * when no training file holds it.
std::string attack_types_of(const eval::ModelEvaluation& model, const std::string& split) {
  std::string types;
  for (const auto& group : model.groups) {
    if (group.split != split || !group.seen_in_training) continue;
    if (!types.empty()) types += ", ";
    types += util::printable_name(group.attack_type) + (*group.seen_in_training ? "" : "*");
  }
  return types.empty() ? "-" : types;
}

// `text` cut to `width` columns, its end replaced by "~" when cut.
std::string fit(const std::string& text, std::size_t width) {
  return text.size() <= width ? text : text.substr(0, width - 1) + "~";
}

// Lines of at most kSummaryColumns, broken at spaces, continuation lines indented.
constexpr std::size_t kSummaryColumns = 100;
std::string wrapped(const std::string& text) {
  std::string out;
  std::string line;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const auto word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > kSummaryColumns) {
      out += line + "\n";
      line = "    ";
    }
    line += (line.empty() || line == "    " ? "" : " ") + word;
    start = end + 1;
  }
  return out + line + "\n";
}

// The model of `models` with the highest deployed F1 on `split`, and that F1 (null and -1 when none
// has one).
std::pair<const eval::ModelEvaluation*, double> best_on(
    const std::vector<const eval::ModelEvaluation*>& models, const std::string& split) {
  const eval::ModelEvaluation* best = nullptr;
  double best_f1 = -1;
  for (const auto* model : models) {
    const auto* group = whole_split(*model, split);
    if (group == nullptr || std::isnan(deployed_f1(*group)) || deployed_f1(*group) <= best_f1)
      continue;
    best_f1 = deployed_f1(*group);
    best = model;
  }
  return {best, best_f1};
}

// Per test condition: its attack types, the best GNN model at the deployed decision, the best
// hybrid (GNNs fused with the baseline), and the baseline.
std::string render_conditions(const EvaluationStageResult& evaluation) {
  const eval::ModelEvaluation* baseline = nullptr;
  std::vector<const eval::ModelEvaluation*> models;
  std::vector<const eval::ModelEvaluation*> hybrids;
  for (const auto& model : evaluation.models) {
    if (model.model == kBaselineModel)
      baseline = &model;
    else if (model.hybrid)
      hybrids.push_back(&model);
    else
      models.push_back(&model);
  }
  std::vector<std::string> splits;
  for (const auto& model : evaluation.models)
    for (const auto& group : model.groups)
      if (group.attack_type.empty() && group.split != "validation" &&
          std::find(splits.begin(), splits.end(), group.split) == splits.end())
        splits.push_back(group.split);
  const bool label_free =
      std::any_of(evaluation.models.begin(), evaluation.models.end(),
                  [](const auto& m) { return !m.label_free_thresholds.empty(); });
  std::string out = wrapped(fmt::format(
      "F1 by test condition at the {} decision{}: the best GNN model there, the hybrid (the "
      "students fused with the baseline's score) and the classical baseline (per-ID timing and ID "
      "transitions, no GNN). * an attack type no training file holds. Every model, split, attack "
      "type and decision: evaluation.json and the report.",
      label_free ? "label-free" : "calibrated",
      label_free ? " (a threshold per test file from its first windows, no label read)" : ""));
  out += fmt::format("{:<34}  {:<12}  {:<22}  {:>6}  {:>6}  {:>8}\n", "condition", "attack types",
                     "best GNN model", "F1", "hybrid", "baseline");
  std::vector<std::string> baseline_wins;
  for (const auto& split : splits) {
    const auto [best, best_f1] = best_on(models, split);
    const auto [hybrid, hybrid_f1] = best_on(hybrids, split);
    const auto* base = baseline == nullptr ? nullptr : whole_split(*baseline, split);
    const double base_f1 = base == nullptr ? std::nan("") : deployed_f1(*base);
    if (!std::isnan(base_f1) && base_f1 >= best_f1) baseline_wins.push_back(split);
    const auto& typed = !models.empty()    ? *models.front()
                        : !hybrids.empty() ? *hybrids.front()
                                           : *baseline;
    out += fmt::format("{:<34}  {:<12}  {:<22}  {:>6}  {:>6}  {:>8}\n",
                       fit(util::printable_name(split), 34), fit(attack_types_of(typed, split), 12),
                       best == nullptr ? "-" : fit(util::printable_name(best->model), 22),
                       best == nullptr ? "-" : format_f1(best_f1),
                       hybrid == nullptr ? "-" : format_f1(hybrid_f1),
                       base == nullptr ? "-" : format_f1(base_f1));
  }
  if (!baseline_wins.empty()) {
    std::string names;
    for (const auto& split : baseline_wins)
      names += (names.empty() ? "" : ", ") + util::printable_name(split);
    out += wrapped("No GNN model beats the baseline on: " + names + ".");
  }
  std::size_t warnings = 0;
  for (const auto& model : evaluation.models) warnings += model.warnings.size();
  if (warnings > 0)
    out +=
        wrapped(fmt::format("WARNING: {} decision(s) degenerate, near-degenerate or partly "
                            "covered: see the evaluation log and evaluation.json.",
                            warnings));
  return out;
}

}  // namespace

std::string render_pipeline_summary(const PipelineResult& result) {
  std::string out = render_conditions(result.evaluation);
  out +=
      "\nstage                        epochs  best   wall time   graphs/s   peak tensor memory\n";
  for (const auto& stage : result.stages) {
    const auto& o = stage.result.outcome;
    out += fmt::format("{:<28} {:>6} {:>5} {:>10.1f}s {:>10.0f}   {}{}\n", fit(stage.name, 28),
                       o.epochs, o.best_epoch + 1, stage.wall_seconds, o.graphs_per_second,
                       format_mib(o.peak_tensor_bytes), o.already_complete ? "  (reused)" : "");
  }
  std::int64_t evaluation_peak = 0;
  for (const auto& [model, peak] : result.evaluation.peak_tensor_bytes)
    evaluation_peak = std::max(evaluation_peak, peak);
  out += fmt::format("{:<28} {:>6} {:>5} {:>10.1f}s {:>10}   {}\n", "evaluation", "-", "-",
                     result.evaluation_wall_seconds, "-", format_mib(evaluation_peak));
  out += fmt::format("\ntotal wall time {:.1f} s, peak RSS {}\n", result.wall_seconds,
                     format_mib(result.peak_rss_bytes));
  return out;
}

}  // namespace headroom::train
