// A student VGAE of a store's preset with freshly initialised weights (drawn after seeding torch's
// generator with `seed`), for tests of the passes that read an autoencoder's per-node evidence.
#pragma once

#include <torch/torch.h>

#include <cstdint>

#include "headroom/store/graph_store.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/families/model_family.hpp"

namespace headroom::testing {

inline train::LoadedAutoencoder untrained_student_vgae(const store::GraphStore& store,
                                                       std::uint64_t seed) {
  const auto& family = train::autoencoder_family("vgae");
  const auto preset = train::preset_model(store, "vgae", models::ModelSize::kStudent);
  torch::manual_seed(seed);
  return {&family, family.build_autoencoder(preset.config), {}};
}

}  // namespace headroom::testing
