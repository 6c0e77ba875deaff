// `headroom generate`: writes the synthetic dataset a fresh clone trains on.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "headroom/cli/commands.hpp"
#include "headroom/cli/not_negative.hpp"
#include "headroom/synthetic/synthetic_traffic.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::cli {
namespace {

struct GenerateArgs {
  std::string out = "data/synthetic";
  std::uint64_t frames = synthetic::SyntheticDatasetOptions{}.total_frames;
  std::uint64_t seed = synthetic::SyntheticDatasetOptions{}.seed;
  bool force = false;
};

void run_generate(const GenerateArgs& args) {
  const auto started = std::chrono::steady_clock::now();
  const synthetic::SyntheticDatasetSummary summary = synthetic::generate_synthetic_dataset(
      args.out, synthetic::SyntheticDatasetOptions{.seed = args.seed, .total_frames = args.frames},
      args.force);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - started;

  std::uint64_t frames = 0;
  std::uint64_t attack_frames = 0;
  for (const auto& file : summary.files) {
    std::printf("  %-55s %10llu frames %9llu attack  %s\n",
                file.relative_path.generic_string().c_str(),
                static_cast<unsigned long long>(file.frames),
                static_cast<unsigned long long>(file.attack_frames), file.attack_type.c_str());
    frames += file.frames;
    attack_frames += file.attack_frames;
  }
  // --out is a path the user typed: escaped, like every name headroom prints.
  std::printf("wrote %s: %zu files, %llu frames (%llu attack), %zu ECUs, seed %llu, %.2f s\n",
              util::printable_path(args.out).c_str(), summary.files.size(),
              static_cast<unsigned long long>(frames),
              static_cast<unsigned long long>(attack_frames), summary.ecu_count,
              static_cast<unsigned long long>(args.seed), elapsed.count());
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto args = std::make_shared<GenerateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "generate",
      "Write a synthetic CAN intrusion dataset (can-train-and-test CSV in train_*/test_* "
      "directories: attack-free, DoS, fuzzing, and spoofing as the attack unseen in training)");
  cmd->add_option("--out", args->out, "Dataset directory to create")->capture_default_str();
  cmd->add_option("--frames", args->frames, "Frames in the whole dataset, split across the files")
      ->capture_default_str()
      ->check(CLI::Range(synthetic::kMinSyntheticFrames, std::uint64_t{1'000'000'000'000}));
  cmd->add_option("--seed", args->seed, "Seed; the same seed and frame count give identical files")
      ->check(not_negative())
      ->capture_default_str();
  cmd->add_flag("--force", args->force, "Replace the directory if it exists (written by generate)");
  cmd->callback([args] { run_generate(*args); });
}

}  // namespace headroom::cli
