// The stage registry: every stage headroom knows, in the order `headroom --help` lists their
// commands. A stage is its file (its StageTraits and StageDefinition, stages/stage_definition.hpp)
// and one line in stage_registry.cpp; the stage commands, their flags and the lists of stage
// names in help and errors are read from here.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "headroom/train/stages/stage_definition.hpp"

namespace headroom::train {

std::span<const StageDefinition* const> stage_definitions();

// The definition of `stage`; throws std::invalid_argument for a stage that is not registered.
const StageDefinition& stage_definition(Stage stage);
// The definition of the stage named `name`; throws std::invalid_argument listing the names.
const StageDefinition& stage_definition(std::string_view name);

// The option groups that some registered stage reads (`headroom run` offers them all).
OptionGroups option_groups_of_every_stage();

// The training step of config.stage prepared as the stage prepares it (PreparedStage); throws
// std::invalid_argument for a stage without a graph training step.
std::unique_ptr<PreparedStage> prepare_stage(const TrainingConfig& config);

}  // namespace headroom::train
