// A stage as the configuration sees it: its name, which option groups it reads, how its run
// directory is named, what it checks beyond the option groups' own checks, its learning rate when
// none is given, and what it adds to config.json. Each stage defines its StageTraits in its own
// file (train/stages/, train/fusion/, train/evaluation/); TrainingConfig names the stage it
// configures by a Stage handle to them. The stage registry (train/pipeline/stage_registry.hpp)
// lists every stage with what runs it.
//
// Traits are constants with static storage, never copied: a Stage compares by identity.
// Thread-safe (read-only).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace headroom::train {

struct TrainingConfig;
enum class FamilyRole;  // train/families/model_family.hpp

// The option groups of TrainingConfig that a stage reads, beyond the run, device and memory options
// that every stage reads. A stage's command offers only the flags of the groups it reads, so that
// a flag it would ignore is refused instead of accepted without a word.
struct OptionGroups {
  bool model = false;      // --hidden, --layers, --latent, ... (the preset's overrides)
  bool training = false;   // --batch-size, --max-epochs: a graph model's training
  bool optimiser = false;  // --learning-rate, --weight-decay, --gradient-clip, --patience, --seed
  bool distillation = false;  // --use-kd, --teacher-path, --kd-*, the teacher's placement
  bool curriculum = false;    // --autoencoder-path, --curriculum-*
  bool fusion = false;        // --fusion-*
  bool calibration = false;   // --calibration, --target-fpr
  bool evaluation = false;    // --models, --vehicle-calibration

  // Every group that either reads.
  constexpr OptionGroups operator|(const OptionGroups& o) const {
    return {.model = model || o.model,
            .training = training || o.training,
            .optimiser = optimiser || o.optimiser,
            .distillation = distillation || o.distillation,
            .curriculum = curriculum || o.curriculum,
            .fusion = fusion || o.fusion,
            .calibration = calibration || o.calibration,
            .evaluation = evaluation || o.evaluation};
  }
};

struct StageTraits {
  // "autoencoder", "curriculum", ...: the command and the config.json key.
  std::string_view name = {};
  // --preset's default, "MODEL,SIZE" ("gat,teacher") or "MODEL" for a stage whose models have no
  // sizes; empty for a stage that trains no model of the user's choice (fusion, evaluation).
  std::string_view default_preset = {};
  OptionGroups reads = {};
  // The run directory's name under runs/{dataset}/ (run_directory in training_config.hpp).
  std::string (*run_directory_name)(const TrainingConfig& config) = nullptr;
  // The stage's own checks, after every option group's (validate in training_config.hpp). Throws
  // std::invalid_argument naming the flag.
  void (*validate)(const TrainingConfig& config) = nullptr;
  // The learning rate without --learning-rate; nullptr: the model family's default for the size.
  double (*default_learning_rate)(const TrainingConfig& config) = nullptr;
  // Keys only this stage records in config.json; nullptr: none. (Keys added to a stage change its
  // recorded configuration, and a changed configuration is not resumed.)
  void (*record)(nlohmann::json& json, const TrainingConfig& config) = nullptr;

  // The MODEL of default_preset ("gat" of "gat,teacher"); empty when there is none.
  constexpr std::string_view default_family() const {
    return default_preset.substr(0, default_preset.find(','));
  }
};

// Which stage a configuration is for: a handle to the stage's traits; empty until set.
class Stage {
 public:
  Stage() = default;
  Stage(const StageTraits& traits) : traits_(&traits) {}  // NOLINT: a stage is its traits

  // Throws std::logic_error when empty: a configuration used before its stage was set.
  const StageTraits& traits() const;
  std::string_view name() const { return traits().name; }
  bool empty() const { return traits_ == nullptr; }

  friend bool operator==(const Stage& a, const Stage& b) { return a.traits_ == b.traits_; }

 private:
  const StageTraits* traits_ = nullptr;
};

std::string to_string(Stage stage);

// The run directory name of a stage that trains a graph model: {size}_{stage}[_{family}][_kd], the
// family named when it is not the one of the stage's default preset (`teacher_normal_gcn`).
std::string model_stage_directory_name(const TrainingConfig& config);

// The checks of a stage that trains a graph model: the model, distillation and curriculum groups,
// distillation only into a student, and a family of the role the stage trains.
void validate_model_stage(const TrainingConfig& config, FamilyRole role);

}  // namespace headroom::train
