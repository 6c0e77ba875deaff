// The flags of the training and evaluation stages (every TrainingConfig field), shared by
// `headroom autoencoder|curriculum|normal|fusion|evaluation` and `headroom run`.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "headroom/train/config/training_config.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace headroom::cli {

// The flag groups a command offers, beyond --dataset, --runs-dir, the device-and-run and memory
// flags and --eval-batch-size that every one reads: the option groups its stage reads
// (train::StageTraits::reads; `run`: every registered stage's; `plan`: the autoencoder's, which
// are the model and training flags of a graph model).
using FlagGroups = train::OptionGroups;

// The flags bind straight into `config`'s fields, the model overrides included (each sets its
// optional field only when given). What needs parsing beyond a value stays text until resolve():
// the preset (family and size) and the byte sizes of the budgets.
struct TrainingFlags {
  train::TrainingConfig config;
  std::string preset = "gat,teacher";
  std::string memory_budget;  // "1GB", "512MiB", ...; empty: default
  std::string host_memory_budget;
  // Data-parallel launch (not part of the configuration: how a run executes, not what it
  // computes): "auto" joins a torchrun or srun job when launched by one, "off" never does.
  std::string distributed = "auto";
  double distributed_timeout_seconds = 300;
  // The model override flags by the ModelOptions field each sets (require_flags_of_family).
  std::map<std::string, CLI::Option*> overrides;

  // `with_store`: add --store (stages; `run` sets the store itself). `with_preset`: add --preset.
  // `shares_preprocess_flags`: --threads, --seed and --wait-for-lock already come from the
  // preprocess flags (`run`), which then set both.
  void add_to(CLI::App& command, FlagGroups groups, bool with_store = true, bool with_preset = true,
              bool shares_preprocess_flags = false);
  // The configuration for `stage`; throws std::invalid_argument on a bad value.
  train::TrainingConfig resolve(train::Stage stage) const;
  // Throws std::invalid_argument when a model flag was given that `family` does not read
  // (`normal --preset gat,teacher --latent 8`). For the commands that train or plan one family;
  // `run` trains several with one flag set and does not call it.
  void require_flags_of_family(std::string_view family) const;

 private:
  // One --help group each, in the order they are listed.
  void add_model_flags(CLI::App& command);
  void add_optimisation_flags(CLI::App& command, FlagGroups groups, bool shares_preprocess_flags);
  void add_run_flags(CLI::App& command, bool shares_preprocess_flags);
  void add_memory_flags(CLI::App& command);
  void add_distillation_flags(CLI::App& command);
  void add_curriculum_flags(CLI::App& command);
  void add_fusion_flags(CLI::App& command);
  void add_evaluation_flags(CLI::App& command, FlagGroups groups);
};

}  // namespace headroom::cli
