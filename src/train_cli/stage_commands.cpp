#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <memory>

#include "headroom/cli/commands.hpp"
#include "headroom/train/autoencoder_stage.hpp"
#include "headroom/train/classifier_stage.hpp"
#include "headroom/train/evaluation_stage.hpp"
#include "headroom/train/fusion_stage.hpp"
#include "headroom/train_cli/data_parallel.hpp"
#include "headroom/train_cli/train_commands.hpp"
#include "headroom/train_cli/training_flags.hpp"

namespace headroom::cli {
namespace {

void print_outcome(const train::StageResult& result) {
  const auto& o = result.outcome;
  fmt::print(
      "{}: {} epochs, best epoch {} (validation loss {:.5f}), {:.1f} s, {:.0f} graphs/s, "
      "peak tensor memory {:.1f} MiB\n",
      result.run_dir.string(), o.epochs, o.best_epoch + 1, o.best_validation_loss, o.seconds,
      o.graphs_per_second, static_cast<double>(o.peak_tensor_bytes) / (1 << 20));
}

void add_training_stage(CLI::App& app, const char* name, train::Stage stage,
                        const char* default_preset, const char* example) {
  auto* command = app.add_subcommand(name, std::string(training_command_summary(name)));
  auto flags = std::make_shared<TrainingFlags>();
  flags->preset = default_preset;
  flags->add_to(*command);
  command->footer(example);
  command->callback([flags, stage] {
    auto config = flags->resolve(stage);
    const auto job = join_data_parallel_job(*flags, config);
    print_outcome(stage == train::Stage::kAutoencoder
                      ? train::run_autoencoder_stage(config, job->hooks())
                      : train::run_classifier_stage(config, job->hooks()));
  });
}

}  // namespace

void add_training_commands(CLI::App& app) {
  add_training_stage(app, "autoencoder", train::Stage::kAutoencoder, "vgae,teacher",
                     "Example: headroom autoencoder --store stores/hcrl_sa --preset vgae,teacher\n"
                     "         headroom autoencoder --store stores/hcrl_sa --preset vgae,student "
                     "--use-kd true --teacher-path runs/hcrl_sa/teacher_autoencoder");
  add_training_stage(app, "curriculum", train::Stage::kCurriculum, "gat,teacher",
                     "Example: headroom curriculum --store stores/hcrl_sa --preset gat,teacher\n"
                     "         headroom curriculum --store stores/hcrl_sa --preset gat,student "
                     "--use-kd true --teacher-path runs/hcrl_sa/teacher_curriculum");
  add_training_stage(app, "normal", train::Stage::kNormal, "gat,teacher",
                     "Example: headroom normal --store stores/hcrl_sa --preset gat,student "
                     "--max-epochs 20");

  auto* fusion = app.add_subcommand("fusion", std::string(training_command_summary("fusion")));
  auto fusion_flags = std::make_shared<TrainingFlags>();
  fusion_flags->add_to(*fusion, /*with_store=*/true, /*with_preset=*/false);
  fusion->footer(
      "Example: headroom fusion --store stores/hcrl_sa\n"
      "         headroom fusion --store stores/hcrl_sa --fusion-method logistic "
      "--fusion-classifier runs/hcrl_sa/teacher_curriculum");
  fusion->callback([fusion_flags] {
    auto config = fusion_flags->resolve(train::Stage::kFusion);
    const auto job = join_data_parallel_job(*fusion_flags, config);
    print_outcome(train::run_fusion_stage(config, job->hooks()));
  });

  auto* command =
      app.add_subcommand("evaluation", std::string(training_command_summary("evaluation")));
  auto flags = std::make_shared<TrainingFlags>();
  flags->add_to(*command, /*with_store=*/true, /*with_preset=*/false);
  command->footer(
      "Example: headroom evaluation --store stores/hcrl_sa\n"
      "         headroom evaluation --store stores/hcrl_sa --models "
      "runs/hcrl_sa/student_curriculum_kd");
  command->callback([flags] {
    auto config = flags->resolve(train::Stage::kEvaluation);
    const auto job = join_data_parallel_job(*flags, config);
    const auto result = train::run_evaluation_stage(config);
    fmt::print("evaluation written to {}\n", result.run_dir.string());
  });
}

}  // namespace headroom::cli
