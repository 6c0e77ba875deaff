#include "headroom/train/pipeline/pipeline.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cmath>

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
                            const StageObservers& observers) {
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
    result.stages.push_back(std::move(done));
  };
  for (const auto& step : steps)
    run_stage(stage_config(step.stage, std::string(step.stage.traits->default_family()), step.size,
                           step.teacher),
              step.stage);
  // The students' scores fused, by upstream's DQN and by a logistic regression.
  for (const char* method : {"dqn", "logistic"}) {
    TrainingConfig config = base;
    config.stage = kFusionStage;
    config.fusion.method = method;
    try {
      run_stage(config, kFusionStageDefinition);
    } catch (const FusionUnavailable& e) {
      fmt::print("skipped: {}\n", e.what());
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
  result.evaluation =
      observed_stage(observers, eval_dir.filename().string(), eval_config, eval_dir, {},
                     [&](const LoopHooks&) { return run_evaluation_stage(eval_config); });
  result.wall_seconds = seconds_since(start);
  result.peak_rss_bytes = memory::process_peak_rss_bytes();
  return result;
}

std::string render_pipeline_summary(const PipelineResult& result) {
  std::string out =
      "F1 by model and test condition (decision at 0.5 / at the model's calibrated threshold"
      "[ / at the test split's vehicle threshold, with --vehicle-calibration])\n";
  std::vector<std::string> splits;
  for (const auto& model : result.evaluation.models)
    for (const auto& group : model.groups)
      if (group.attack_type.empty() &&
          std::find(splits.begin(), splits.end(), group.split) == splits.end())
        splits.push_back(group.split);
  // Split and model names come from directory names: printed escaped.
  std::size_t width = 24;
  for (const auto& s : splits) width = std::max(width, util::printable_name(s).size() + 2);
  out += fmt::format("{:<{}}", "condition", width);
  for (const auto& model : result.evaluation.models)
    out += fmt::format("{:>33}", util::printable_name(model.model));
  out += "\n";
  for (const auto& split : splits) {
    out += fmt::format("{:<{}}", util::printable_name(split), width);
    for (const auto& model : result.evaluation.models) {
      std::string cell = "-";
      for (const auto& group : model.groups)
        if (group.split == split && group.attack_type.empty()) {
          cell = format_f1(group.metrics.f1);
          if (group.calibrated) cell += " / " + format_f1(group.calibrated->f1);
          if (group.vehicle) cell += " / " + format_f1(group.vehicle->f1);
        }
      out += fmt::format("{:>33}", cell);
    }
    out += "\n";
  }
  for (const auto& model : result.evaluation.models)
    for (const auto& warning : model.warnings)
      out += fmt::format("WARNING: {}: {}\n", util::printable_name(model.model), warning);
  out +=
      "\nstage                        epochs  best   wall time   graphs/s   peak tensor memory\n";
  for (const auto& stage : result.stages) {
    const auto& o = stage.result.outcome;
    out += fmt::format("{:<28} {:>6} {:>5} {:>10.1f}s {:>10.0f}   {}{}\n", stage.name, o.epochs,
                       o.best_epoch + 1, stage.wall_seconds, o.graphs_per_second,
                       format_mib(o.peak_tensor_bytes), o.already_complete ? "  (reused)" : "");
  }
  out += fmt::format("\ntotal wall time {:.1f} s, peak RSS {}\n", result.wall_seconds,
                     format_mib(result.peak_rss_bytes));
  return out;
}

}  // namespace headroom::train
