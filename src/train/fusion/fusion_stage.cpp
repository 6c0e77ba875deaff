#include "headroom/train/fusion/fusion_stage.hpp"

#include <fmt/format.h>
#include <cctype>
#include <stdexcept>
#include <string>

#include "fusion_task.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/fusion/fusion_scoring.hpp"
#include "headroom/train/task/task_driver.hpp"

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
  // The models resolved before the run directory: a missing model leaves no directory behind.
  FusionTask task(fusion_config, resolve_sources(fusion_config));
  return drive_task(fusion_config, task, hooks);
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
