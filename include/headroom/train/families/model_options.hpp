// What to train, as the command line and config files give it: a model family, its preset size
// and overrides of the preset. Each family resolves these into its model configuration in its own
// file (src/train/families/*_family.cpp). Plain data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/models/model_config.hpp"
#include "headroom/models/model_inputs.hpp"

namespace headroom::train {

// --gradient-checkpointing: whether each GAT layer is recomputed in the backward pass (less
// memory, about one extra forward). kAuto, the default, is decided by the stage before its first
// epoch (train/batches/checkpointing_choice.hpp): off when the step without it fits the budget at
// the largest batch the stage packs, on otherwise.
enum class Checkpointing { kAuto, kOn, kOff };

// "auto", "on", "off"; the parser also takes "true" and "false" (the flag was boolean) and throws
// std::invalid_argument for another word. Defined in src/train/families/registry.cpp.
std::string_view to_string(Checkpointing checkpointing);
Checkpointing parse_checkpointing(std::string_view text);

// What to train: a model family, its preset size and overrides of the preset.
struct ModelOptions {
  std::string family = "gat";  // a model family's name (model_family.hpp): gat, vgae, gcn
  models::ModelSize size = models::ModelSize::kTeacher;
  // Overrides (unset: the preset's value).
  std::optional<std::int64_t> hidden;  // GAT hidden channels per head
  std::optional<std::int64_t> layers;  // GAT layers
  std::optional<std::int64_t> heads;
  std::optional<std::int64_t> embedding_dim;
  std::optional<std::int64_t> fc_layers;
  std::optional<std::int64_t> latent;     // VGAE latent size
  std::vector<std::int64_t> vgae_hidden;  // VGAE encoder widths (empty: preset)
  // VGAE layers (models::VgaeLayout): "kd-gat" (upstream's) or "mirrored" (headroom's first, with
  // its presets: the latent width as a last encoder layer, a mirrored decoder).
  std::string vgae_layout = "kd-gat";
  std::optional<double> dropout;
  Checkpointing gradient_checkpointing = Checkpointing::kAuto;

  // The model's checkpointing flag before a stage has decided kAuto: on (the side that fits).
  bool checkpointing_until_chosen() const { return gradient_checkpointing != Checkpointing::kOff; }

  // Throws std::invalid_argument naming the flag (unknown family, non-positive sizes, ...).
  // Defined in src/train/families/registry.cpp, beside the families it checks `family` against.
  void validate() const;
};

// Defined beside their families (gat_family.cpp, vgae_family.cpp):
// The preset of options.size for `num_ids` CAN IDs with the overrides of `options` applied.
models::GatConfig resolve_gat_config(const ModelOptions& options,
                                     const models::ModelInputs& inputs);
models::VgaeConfig resolve_vgae_config(const ModelOptions& options,
                                       const models::ModelInputs& inputs);

}  // namespace headroom::train
