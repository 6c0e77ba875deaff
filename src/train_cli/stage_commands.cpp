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

void add_training_stage(CLI::App& app, const char* name, train::Stage stage, FlagGroups groups,
                        const char* default_preset, const char* example) {
  auto* command = app.add_subcommand(name, std::string(training_command_summary(name)));
  auto flags = std::make_shared<TrainingFlags>();
  auto tracking = std::make_shared<TrackingFlags>();
  flags->preset = default_preset;
  flags->add_to(*command, groups);
  tracking->add_to(*command);
  command->footer(example);
  command->callback([flags, tracking, stage] {
    auto config = flags->resolve(stage);
    flags->require_flags_of_family(config.model.family);
    const auto job = join_data_parallel_job(*flags, config);
    print_outcome(tracked_stage(*tracking, config, job->hooks(),
                                stage == train::Stage::kAutoencoder ? train::run_autoencoder_stage
                                                                    : train::run_classifier_stage));
  });
}

}  // namespace

void add_training_commands(CLI::App& app) {
  add_training_stage(app, "autoencoder", train::Stage::kAutoencoder, FlagGroups::autoencoder(),
                     "vgae,teacher",
                     "Example: headroom autoencoder --store stores/hcrl_sa --preset vgae,teacher\n"
                     "         headroom autoencoder --store stores/hcrl_sa --preset vgae,student "
                     "--use-kd true --teacher-path runs/hcrl_sa/teacher_autoencoder");
  add_training_stage(app, "curriculum", train::Stage::kCurriculum, FlagGroups::curriculum_stage(),
                     "gat,teacher",
                     "Example: headroom curriculum --store stores/hcrl_sa --preset gat,teacher\n"
                     "         headroom curriculum --store stores/hcrl_sa --preset gat,student "
                     "--use-kd true --teacher-path runs/hcrl_sa/teacher_curriculum");
  add_training_stage(app, "normal", train::Stage::kNormal, FlagGroups::normal(), "gat,teacher",
                     "Example: headroom normal --store stores/hcrl_sa --preset gat,student "
                     "--max-epochs 20");

  auto* fusion = app.add_subcommand("fusion", std::string(training_command_summary("fusion")));
  auto fusion_flags = std::make_shared<TrainingFlags>();
  auto fusion_tracking = std::make_shared<TrackingFlags>();
  fusion_flags->add_to(*fusion, FlagGroups::fusion_stage(), /*with_store=*/true,
                       /*with_preset=*/false);
  fusion_tracking->add_to(*fusion);
  fusion->footer(
      "Example: headroom fusion --store stores/hcrl_sa\n"
      "         headroom fusion --store stores/hcrl_sa --fusion-method logistic "
      "--fusion-classifier runs/hcrl_sa/teacher_curriculum");
  fusion->callback([fusion_flags, fusion_tracking] {
    auto config = fusion_flags->resolve(train::Stage::kFusion);
    const auto job = join_data_parallel_job(*fusion_flags, config);
    print_outcome(tracked_stage(*fusion_tracking, config, job->hooks(), train::run_fusion_stage));
  });

  auto* command =
      app.add_subcommand("evaluation", std::string(training_command_summary("evaluation")));
  auto flags = std::make_shared<TrainingFlags>();
  auto tracking = std::make_shared<TrackingFlags>();
  flags->add_to(*command, FlagGroups::evaluation_stage(), /*with_store=*/true,
                /*with_preset=*/false);
  tracking->add_to(*command);
  command->footer(
      "Example: headroom evaluation --store stores/hcrl_sa\n"
      "         headroom evaluation --store stores/hcrl_sa --models "
      "runs/hcrl_sa/student_curriculum_kd");
  command->callback([flags, tracking] {
    auto config = flags->resolve(train::Stage::kEvaluation);
    const auto job = join_data_parallel_job(*flags, config);
    const auto result = tracked_stage(*tracking, config, job->hooks(),
                                      [](const train::TrainingConfig& c, const train::LoopHooks&) {
                                        return train::run_evaluation_stage(c);
                                      });
    fmt::print("evaluation written to {}\n", util::printable_path(result.run_dir));
  });
}

}  // namespace headroom::cli
