#include "headroom/train/pipeline/stage_registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <stdexcept>
#include <vector>

#include "headroom/train/evaluation/evaluation_stage.hpp"
#include "headroom/train/fusion/fusion_stage.hpp"
#include "headroom/train/stages/autoencoder_stage.hpp"
#include "headroom/train/stages/classifier_stage.hpp"
#include "headroom/train/stages/geometric_stage.hpp"
#include "headroom/train/stages/node_classifier_stage.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::train {

std::span<const StageDefinition* const> stage_definitions() {
  static const StageDefinition* const kStages[] = {
      &kAutoencoderStageDefinition, &kCurriculumStageDefinition, &kNormalStageDefinition,
      &kFusionStageDefinition,      &kEvaluationStageDefinition, &kNodeStageDefinition,
      &kGeometricStageDefinition,
  };
  return kStages;
}

const StageDefinition& stage_definition(Stage stage) {
  for (const auto* definition : stage_definitions())
    if (Stage(*definition->traits) == stage) return *definition;
  throw std::invalid_argument("stage '" + to_string(stage) + "' is not registered");
}

const StageDefinition& stage_definition(std::string_view name) {
  std::vector<std::string_view> names;
  for (const auto* definition : stage_definitions()) {
    if (definition->traits->name == name) return *definition;
    names.push_back(definition->traits->name);
  }
  throw std::invalid_argument(
      fmt::format("no stage '{}' (stages: {})", util::printable(name), fmt::join(names, ", ")));
}

OptionGroups option_groups_of_every_stage() {
  OptionGroups groups;
  for (const auto* definition : stage_definitions()) groups = groups | definition->traits->reads;
  return groups;
}

std::unique_ptr<PreparedStage> prepare_stage(const TrainingConfig& config) {
  const auto& definition = stage_definition(config.stage);
  if (definition.prepare == nullptr)
    throw std::invalid_argument("stage " + to_string(config.stage) +
                                " has no graph training step to prepare");
  return definition.prepare(config);
}

}  // namespace headroom::train
