#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "headroom/cli/commands.hpp"
#include "headroom/store/store_source.hpp"
#include "headroom/train/pipeline/stage_registry.hpp"
#include "headroom/train_cli/data_parallel.hpp"
#include "headroom/train_cli/tracking_flags.hpp"
#include "headroom/train_cli/train_commands.hpp"
#include "headroom/train_cli/training_app.hpp"
#include "headroom/train_cli/training_flags.hpp"
#include "headroom/util/output_path.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::cli {
namespace {

void print_outcome(const train::StageResult& result) {
  const auto& o = result.outcome;
  fmt::print(
      "{}: {} epochs, best epoch {} (validation loss {:.5f}), {:.1f} s, {:.0f} graphs/s, "
      "peak tensor memory {:.1f} MiB\n",
      util::printable_path(result.run_dir), o.epochs, o.best_epoch + 1, o.best_validation_loss,
      o.seconds, o.graphs_per_second, static_cast<double>(o.peak_tensor_bytes) / (1 << 20));
}

// Runs `stage(config, hooks)` with the job's hooks, watched by the trackers that `tracking` asks
// for (opened after the job is joined: only the writing rank tracks).
template <typename RunStage>
auto tracked_stage(const TrackingFlags& tracking, const train::TrainingConfig& config,
                   const train::LoopHooks& job_hooks, RunStage&& stage) {
  const auto trackers = tracking.open(std::cerr);
  const auto run_dir = train::run_directory(config);
  return train::observed_stage(trackers->observers(), run_dir.filename().string(), config, run_dir,
                               job_hooks,
                               [&](const train::LoopHooks& hooks) { return stage(config, hooks); });
}

// The registered stages that are commands of their own (not `node`, which `run CORPUS` runs).
std::vector<const train::StageDefinition*> stage_commands() {
  std::vector<const train::StageDefinition*> commands;
  for (const auto* definition : train::stage_definitions())
    if (!definition->example.empty()) commands.push_back(definition);
  return commands;
}

struct StageCommandFlags {
  std::shared_ptr<TrainingFlags> training = std::make_shared<TrainingFlags>();
  std::shared_ptr<TrackingFlags> tracking = std::make_shared<TrackingFlags>();
};

// Whether the stage trains a model of the user's choice (it has --preset).
bool has_preset(const train::StageDefinition& stage) {
  return !stage.traits->default_preset.empty();
}

CLI::App* add_stage_command(CLI::App& app, const train::StageDefinition& stage,
                            const StageCommandFlags& flags) {
  const auto name = std::string(stage.traits->name);
  auto* command = app.add_subcommand(name, std::string(training_command_summary(name)));
  if (has_preset(stage)) flags.training->preset = stage.traits->default_preset;
  flags.training->add_to(*command, stage.traits->reads, /*with_store=*/true, has_preset(stage));
  flags.tracking->add_to(*command);
  command->footer(std::string(stage.example));
  return command;
}

// The configuration the command trains with, after every check that comes before training.
train::TrainingConfig resolve_stage(const train::StageDefinition& stage,
                                    const TrainingFlags& flags) {
  auto config = flags.resolve(*stage.traits);
  if (has_preset(stage)) flags.require_flags_of_family(config.model.family);
  return config;
}

// What a stage command writes (its run directories, TensorBoard's event files) may not be, hold
// or lie inside what it reads: the store, and the dataset the store was built from. Run files
// written there once made headroom refuse its own store and dataset as holding foreign files.
void require_outputs_outside_inputs(const train::TrainingConfig& config,
                                    const TrackingFlags& tracking) {
  const auto runs = config.run.runs_dir / train::dataset_name(config);
  std::vector<std::pair<std::filesystem::path, std::string_view>> inputs = {
      {config.run.store, "the store (--store)"}};
  try {
    if (const auto source = store::store_source_at(config.run.store);
        source && !source->source.empty())
      inputs.emplace_back(source->source, "the dataset the store was built from");
  } catch (const std::exception&) {
    // Not a readable store: opening it says so, naming it.
  }
  for (const auto& [input, what] : inputs) {
    util::require_disjoint(runs, "the run directories (--runs-dir)", input, what);
    tracking.require_outside(input, what);
  }
}

void run_stage(const train::StageDefinition& stage, const StageCommandFlags& flags) {
  auto config = resolve_stage(stage, *flags.training);
  require_outputs_outside_inputs(config, *flags.tracking);
  const auto job = join_data_parallel_job(*flags.training, config);
  const auto result = tracked_stage(*flags.tracking, config, job->hooks(), stage.run);
  if (stage.trains)
    print_outcome(result);
  else
    fmt::print("{} written to {}\n", stage.traits->name, util::printable_path(result.run_dir));
}

}  // namespace

void add_training_commands(CLI::App& app) {
  for (const auto* stage : stage_commands()) {
    StageCommandFlags flags;
    add_stage_command(app, *stage, flags)->callback([stage, flags] { run_stage(*stage, flags); });
  }
}

std::filesystem::path stage_run_directory(const std::vector<std::string>& args) {
  CLI::App app{"headroom"};
  app.require_subcommand(1, 1);
  std::filesystem::path run_directory;
  for (const auto* stage : stage_commands()) {
    StageCommandFlags flags;
    add_stage_command(app, *stage, flags)->callback([stage, flags, &run_directory] {
      run_directory = train::run_directory(resolve_stage(*stage, *flags.training));
    });
  }
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses from the back
  app.parse(reversed);
  return run_directory;
}

}  // namespace headroom::cli
