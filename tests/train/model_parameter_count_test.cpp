// ModelFamily::parameter_count: what a stage checks against the memory budget before it builds a
// model (issue 45, item 9) must be the parameters the built module has, for every family, size and
// override, or the check refuses models that fit and builds models that do not.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "headroom/train/families/model_family.hpp"

namespace headroom::train {
namespace {

double built_parameters(const ModelFamily& family, const nlohmann::json& config) {
  double count = 0;
  for (const auto& p : family.build(config)->parameters()) count += static_cast<double>(p.numel());
  return count;
}

TEST(ModelParameterCount, IsWhatTheBuiltModuleHasForEveryFamilySizeAndOverride) {
  std::vector<ModelOptions> variants;
  for (const auto size : {models::ModelSize::kTeacher, models::ModelSize::kStudent}) {
    ModelOptions preset;
    preset.size = size;
    variants.push_back(preset);
    ModelOptions wide = preset;
    wide.hidden = 24;
    wide.layers = 3;
    wide.heads = 3;
    wide.embedding_dim = 5;
    wide.fc_layers = 4;
    wide.latent = 6;
    wide.vgae_hidden = {24, 12};
    variants.push_back(wide);
    ModelOptions mirrored = preset;
    mirrored.vgae_layout = "mirrored";
    variants.push_back(mirrored);
  }
  const std::vector<models::ModelInputs> inputs_variants = {{37, 11}, {5, 3}, {1, 2}};
  for (const auto name : model_family_names())
    for (auto options : variants)
      for (const auto& inputs : inputs_variants) {
        options.family = std::string(name);
        const auto& family = model_family(name);
        const auto config = family.resolve_config(options, inputs);
        EXPECT_EQ(family.parameter_count(config), built_parameters(family, config))
            << name << " " << config.dump();
      }
}

// The count is the configuration's, not an allocation: a 2^24-identity model is counted without
// building its gigabyte embedding.
TEST(ModelParameterCount, CountsAHugeVocabularyWithoutBuildingIt) {
  for (const auto name : model_family_names()) {
    ModelOptions options;
    options.family = std::string(name);
    options.size = models::ModelSize::kStudent;
    const auto& family = model_family(name);
    const auto small = family.parameter_count(family.resolve_config(options, {1, 11}));
    const auto huge = family.parameter_count(family.resolve_config(options, {1 << 24, 11}));
    EXPECT_GT(huge - small, static_cast<double>((1 << 24) - 1)) << name;
  }
}

}  // namespace
}  // namespace headroom::train
