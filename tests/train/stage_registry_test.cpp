// The stage registry: every stage is found by name and by its traits, becomes a command with the
// flags of the option groups it reads, and is listed for the light `headroom` binary.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

#include "headroom/cli/commands.hpp"
#include "headroom/train/pipeline/stage_registry.hpp"
#include "headroom/train/stages/classifier_stage.hpp"
#include "headroom/train_cli/train_commands.hpp"

namespace headroom::train {
namespace {

bool has_command(const StageDefinition& stage) { return !stage.example.empty(); }

TEST(StageRegistry, EveryStageIsFoundByNameAndByItsTraits) {
  std::set<std::string_view> names;
  for (const auto* stage : stage_definitions()) {
    ASSERT_NE(stage->traits, nullptr);
    ASSERT_NE(stage->run, nullptr) << stage->traits->name;
    ASSERT_NE(stage->traits->run_directory_name, nullptr) << stage->traits->name;
    EXPECT_TRUE(names.insert(stage->traits->name).second) << "twice: " << stage->traits->name;
    EXPECT_EQ(&stage_definition(stage->traits->name), stage);
    EXPECT_EQ(&stage_definition(Stage(*stage->traits)), stage);
  }
  try {
    stage_definition("pretraining");
    FAIL() << "an unknown stage was found";
  } catch (const std::invalid_argument& error) {
    // The error lists what there is, from the registry.
    for (const auto name : names)
      EXPECT_NE(std::string(error.what()).find(name), std::string::npos);
  }
}

// The light binary cannot link the training area, so it lists the training commands itself; the
// list and the registry must agree, or `headroom NAME` would not hand a stage over.
TEST(StageRegistry, EveryStageCommandIsListedForTheLightBinaryWithItsSummary) {
  std::set<std::string_view> listed;
  for (const auto& command : cli::kTrainingCommands) listed.insert(command.name);
  std::set<std::string_view> stages;
  for (const auto* stage : stage_definitions())
    if (has_command(*stage)) {
      stages.insert(stage->traits->name);
      EXPECT_TRUE(listed.contains(stage->traits->name)) << stage->traits->name;
      EXPECT_FALSE(cli::training_command_summary(stage->traits->name).empty());
    }
  for (const auto name : listed)
    EXPECT_TRUE(stages.contains(name) || name == "run" || name == "plan")
        << name << " is listed but is neither a registered stage nor run or plan";
}

TEST(StageRegistry, EachStageCommandOffersTheFlagsOfTheGroupsItReads) {
  CLI::App app{"headroom"};
  cli::add_training_commands(app);
  for (const auto* stage : stage_definitions()) {
    const auto subcommands = app.get_subcommands(
        [&](const CLI::App* sub) { return sub->get_name() == stage->traits->name; });
    ASSERT_EQ(subcommands.size(), has_command(*stage) ? 1U : 0U) << stage->traits->name;
    if (subcommands.empty()) continue;
    const CLI::App* command = subcommands.front();
    const auto& reads = stage->traits->reads;
    const auto offers = [command](const char* flag) {
      return command->get_option_no_throw(flag) != nullptr;
    };
    EXPECT_EQ(offers("--preset"), !stage->traits->default_preset.empty()) << stage->traits->name;
    EXPECT_EQ(offers("--max-epochs"), reads.training) << stage->traits->name;
    EXPECT_EQ(offers("--use-kd"), reads.distillation) << stage->traits->name;
    EXPECT_EQ(offers("--curriculum-start-ratio"), reads.curriculum) << stage->traits->name;
    EXPECT_EQ(offers("--fusion-method"), reads.fusion) << stage->traits->name;
    EXPECT_EQ(offers("--models"), reads.evaluation) << stage->traits->name;
    EXPECT_TRUE(offers("--store")) << stage->traits->name;
  }
}

// Stages trained side by side in one --runs-dir never share a run directory.
TEST(StageRegistry, NoTwoStagesShareARunDirectory) {
  std::set<std::filesystem::path> directories;
  for (const auto* stage : stage_definitions()) {
    TrainingConfig config;
    config.stage = *stage->traits;
    config.run.store = "stores/s";
    if (!stage->traits->default_preset.empty())
      config.model.family = std::string(stage->traits->default_family());
    EXPECT_TRUE(directories.insert(run_directory(config)).second) << run_directory(config);
  }
}

TEST(StageRegistry, OnlyStagesWithAGraphTrainingStepPrepareOne) {
  for (const auto* stage : stage_definitions()) {
    if (stage->prepare != nullptr) continue;
    TrainingConfig config;
    config.stage = *stage->traits;
    EXPECT_THROW(prepare_stage(config), std::invalid_argument) << stage->traits->name;
  }
  EXPECT_NE(stage_definition(kNormalStage).prepare, nullptr);
}

TEST(StageRegistry, AConfigurationWithoutAStageSaysSo) {
  TrainingConfig config;
  config.run.store = "stores/s";
  EXPECT_THROW(run_directory(config), std::logic_error);
  EXPECT_THROW(validate(config), std::logic_error);
}

}  // namespace
}  // namespace headroom::train
