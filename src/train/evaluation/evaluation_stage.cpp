#include "headroom/train/evaluation/evaluation_stage.hpp"

#include <fmt/format.h>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "baseline_scoring.hpp"
#include "evaluated_models.hpp"
#include "evaluation_results.hpp"
#include "headroom/train/context/command_budget.hpp"
#include "headroom/train/context/host_memory.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/fusion/fusion_scoring.hpp"
#include "headroom/train/loop/training_loop.hpp"
#include "headroom/util/printable_text.hpp"
#include "model_scoring.hpp"

namespace headroom::train {
namespace {

// The checkpoints config.evaluation.models names, or every run directory of the dataset with a
// best.pt, by name (evaluated_models.hpp). Throws std::runtime_error when there is none.
std::vector<std::pair<std::string, std::filesystem::path>> models_to_evaluate(
    const TrainingConfig& config) {
  const auto dataset_dir = config.run.runs_dir / dataset_name(config);
  auto sources = config.evaluation.models;
  const bool discovered = sources.empty();
  if (discovered) sources = detail::discover_models(dataset_dir);
  auto models = detail::named_checkpoints(
      sources, discovered
                   ? fmt::format("the run directories under {}", util::printable_path(dataset_dir))
                   : std::string("--models"));
  if (sources.empty())
    throw std::runtime_error(fmt::format(
        "no trained model under {} (run `headroom curriculum`, `normal` or `autoencoder` first, "
        "or pass --models)",
        dataset_dir.string()));
  return models;
}

}  // namespace

EvaluationStageResult run_evaluation_stage(const TrainingConfig& config) {
  TrainingConfig eval_config = config;
  eval_config.stage = kEvaluationStage;
  validate(eval_config);
  const auto store = store::GraphStore::open(config.run.store);
  const auto context = resolve_run_context(config, store, CommandWork::kInference);
  // The models are checked before the run directory is made: a refused list leaves nothing.
  const auto models = models_to_evaluate(config);
  RunDirectory run(checked_run_directory(eval_config), /*echo=*/true, config.run.when_locked);

  std::vector<std::uint32_t> ids(store.validation_ids().begin(), store.validation_ids().end());
  ids.insert(ids.end(), store.test_ids().begin(), store.test_ids().end());

  // Every model is scored inside the memory budgets, each as its own memory phase.
  apply_command_budgets(config, context, run);
  detail::EvaluationResults results(config, context, run, store, ids);
  detail::SharedScores shared{detail::SharedBaseline(config, run, store, ids),
                              FusionSignals(store, ids, config, context)};
  for (const auto& [name, checkpoint] : models) {
    std::optional<detail::ScoredModel> scored;
    const auto peak = run_phase(context.device, [&] {
      scored = detail::evaluate_model(config, context, run, store, ids, checkpoint, name, shared);
    });
    check_host_memory(context.host, "evaluating " + name,
                      "lower --eval-batch-size, or raise --host-memory-budget");
    if (scored) {
      results.record(*scored, checkpoint.string(), peak);
    } else {
      results.drop(name, "not evaluated now");
    }
  }
  if (config.evaluation.baseline) {
    std::optional<detail::ScoredModel> scored;
    const auto peak = run_phase(context.device, [&] {
      scored = detail::evaluate_baseline(config, run, store, ids, shared.baseline);
    });
    check_host_memory(context.host, "evaluating the baseline", "raise --host-memory-budget");
    if (scored) {
      results.record(*scored, "per-ID timing and ID transitions of the store's CAN files", peak);
    } else {
      results.drop(std::string(kBaselineModel), "not evaluated now");
    }
  } else {
    results.drop(std::string(kBaselineModel), "--no-baseline");
  }
  results.finish();
  return {run.path(), std::move(results.models()), results.peak_tensor_bytes()};
}

const StageTraits kEvaluationStage{
    .name = "evaluation",
    .reads = {.calibration = true, .evaluation = true},
    .run_directory_name = [](const TrainingConfig&) { return std::string("evaluation"); },
    // Only an evaluation records it: the other stages' configurations stay as they were, so
    // their runs still resume.
    .record =
        [](nlohmann::json& json, const TrainingConfig& config) {
          json.update(detail::per_file_decision_settings(config.evaluation));
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
