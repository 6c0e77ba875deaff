// What to train, as the command line and config files give it: a model family, its preset size
// and overrides of the preset. Each family resolves these into its model configuration in its own
// file (src/train/families/*_family.cpp). Plain data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "headroom/models/model_config.hpp"
#include "headroom/models/model_inputs.hpp"

namespace headroom::train {

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
  bool gradient_checkpointing = true;

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
