#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "headroom/cli/commands.hpp"
#include "headroom/train/evaluation/evaluation_stage.hpp"
#include "headroom/train/fusion/fusion_stage.hpp"
#include "headroom/train/stages/autoencoder_stage.hpp"
#include "headroom/train/stages/classifier_stage.hpp"
#include "headroom/train_cli/data_parallel.hpp"
#include "headroom/train_cli/tracking_flags.hpp"
#include "headroom/train_cli/train_commands.hpp"
#include "headroom/train_cli/training_app.hpp"
#include "headroom/train_cli/training_flags.hpp"
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
template <typename Stage>
auto tracked_stage(const TrackingFlags& tracking, const train::TrainingConfig& config,
                   const train::LoopHooks& job_hooks, Stage&& stage) {
  const auto trackers = tracking.open(std::cerr);
  const auto run_dir = train::run_directory(config);
  return train::observed_stage(trackers->observers(), run_dir.filename().string(), config, run_dir,
                               job_hooks,
                               [&](const train::LoopHooks& hooks) { return stage(config, hooks); });
}

// A stage command: its name, stage, flag groups and example. One table, read by the commands and
// by stage_run_directory, so both parse and resolve the same flags.
struct StageCommand {
  const char* name;
  train::Stage stage;
  FlagGroups (*groups)();
  const char* default_preset;  // nullptr: the command has no --preset (fusion, evaluation)
  const char* example;
};

const StageCommand kStageCommands[] = {
    {"autoencoder", train::Stage::kAutoencoder, FlagGroups::autoencoder, "vgae,teacher",
     "Example: headroom autoencoder --store stores/hcrl_sa --preset vgae,teacher\n"
     "         headroom autoencoder --store stores/hcrl_sa --preset vgae,student "
     "--use-kd true --teacher-path runs/hcrl_sa/teacher_autoencoder"},
    {"curriculum", train::Stage::kCurriculum, FlagGroups::curriculum_stage, "gat,teacher",
     "Example: headroom curriculum --store stores/hcrl_sa --preset gat,teacher\n"
     "         headroom curriculum --store stores/hcrl_sa --preset gat,student "
     "--use-kd true --teacher-path runs/hcrl_sa/teacher_curriculum"},
    {"normal", train::Stage::kNormal, FlagGroups::normal, "gat,teacher",
     "Example: headroom normal --store stores/hcrl_sa --preset gat,student --max-epochs 20"},
    {"fusion", train::Stage::kFusion, FlagGroups::fusion_stage, nullptr,
     "Example: headroom fusion --store stores/hcrl_sa\n"
     "         headroom fusion --store stores/hcrl_sa --fusion-method logistic "
     "--fusion-classifier runs/hcrl_sa/teacher_curriculum"},
    {"evaluation", train::Stage::kEvaluation, FlagGroups::evaluation_stage, nullptr,
     "Example: headroom evaluation --store stores/hcrl_sa\n"
     "         headroom evaluation --store stores/hcrl_sa --models "
     "runs/hcrl_sa/student_curriculum_kd"},
};

struct StageCommandFlags {
  std::shared_ptr<TrainingFlags> training = std::make_shared<TrainingFlags>();
  std::shared_ptr<TrackingFlags> tracking = std::make_shared<TrackingFlags>();
};

CLI::App* add_stage_command(CLI::App& app, const StageCommand& spec,
                            const StageCommandFlags& flags) {
  auto* command = app.add_subcommand(spec.name, std::string(training_command_summary(spec.name)));
  const bool with_preset = spec.default_preset != nullptr;
  if (with_preset) flags.training->preset = spec.default_preset;
  flags.training->add_to(*command, spec.groups(), /*with_store=*/true, with_preset);
  flags.tracking->add_to(*command);
  command->footer(spec.example);
  return command;
}

// The configuration the command trains with, after every check that comes before training.
train::TrainingConfig resolve_stage(const StageCommand& spec, const TrainingFlags& flags) {
  auto config = flags.resolve(spec.stage);
  if (spec.default_preset != nullptr) flags.require_flags_of_family(config.model.family);
  return config;
}

void run_stage(const StageCommand& spec, const StageCommandFlags& flags) {
  auto config = resolve_stage(spec, *flags.training);
  const auto job = join_data_parallel_job(*flags.training, config);
  switch (spec.stage) {
    case train::Stage::kEvaluation: {
      const auto result =
          tracked_stage(*flags.tracking, config, job->hooks(),
                        [](const train::TrainingConfig& c, const train::LoopHooks&) {
                          return train::run_evaluation_stage(c);
                        });
      fmt::print("evaluation written to {}\n", util::printable_path(result.run_dir));
      return;
    }
    case train::Stage::kFusion:
      return print_outcome(
          tracked_stage(*flags.tracking, config, job->hooks(), train::run_fusion_stage));
    case train::Stage::kAutoencoder:
      return print_outcome(
          tracked_stage(*flags.tracking, config, job->hooks(), train::run_autoencoder_stage));
    default:
      return print_outcome(
          tracked_stage(*flags.tracking, config, job->hooks(), train::run_classifier_stage));
  }
}

}  // namespace

void add_training_commands(CLI::App& app) {
  for (const StageCommand& spec : kStageCommands) {
    StageCommandFlags flags;
    add_stage_command(app, spec, flags)->callback([&spec, flags] { run_stage(spec, flags); });
  }
}

std::filesystem::path stage_run_directory(const std::vector<std::string>& args) {
  CLI::App app{"headroom"};
  app.require_subcommand(1, 1);
  std::filesystem::path run_directory;
  for (const StageCommand& spec : kStageCommands) {
    StageCommandFlags flags;
    add_stage_command(app, spec, flags)->callback([&spec, flags, &run_directory] {
      run_directory = train::run_directory(resolve_stage(spec, *flags.training));
    });
  }
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses from the back
  app.parse(reversed);
  return run_directory;
}

}  // namespace headroom::cli
