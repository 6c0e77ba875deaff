// The registered model families, in the order --help lists them. Adding a family: its file beside
// this one, defining families::NAME_family(), and its line in the list below.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

#include "headroom/train/families/model_family.hpp"

namespace headroom::train {

std::string_view to_string(Checkpointing checkpointing) {
  switch (checkpointing) {
    case Checkpointing::kOn:
      return "on";
    case Checkpointing::kOff:
      return "off";
    case Checkpointing::kAuto:
      break;
  }
  return "auto";
}

Checkpointing parse_checkpointing(std::string_view text) {
  if (text == "auto") return Checkpointing::kAuto;
  if (text == "on" || text == "true") return Checkpointing::kOn;
  if (text == "off" || text == "false") return Checkpointing::kOff;
  throw std::invalid_argument(fmt::format(
      "--gradient-checkpointing must be auto, on or off (true and false also read), not '{}'",
      text));
}
namespace families {
const ModelFamily& gat_family();
const ModelFamily& vgae_family();
const ModelFamily& gcn_family();
}  // namespace families

namespace {

const std::vector<const ModelFamily*>& registry() {
  static const std::vector<const ModelFamily*> families = {
      &families::gat_family(),
      &families::vgae_family(),
      &families::gcn_family(),
  };
  return families;
}

}  // namespace

models::ModelInputs model_inputs(const store::GraphStore& store) {
  const auto& metadata = store.metadata();
  return {static_cast<std::int64_t>(store::identity_classes(metadata)),
          static_cast<std::int64_t>(metadata.node_feature_count)};
}

void require_store_inputs(const nlohmann::json& model_config, const store::GraphStore& store,
                          const std::filesystem::path& checkpoint) {
  const auto inputs = model_inputs(store);
  const auto num_ids = model_config.value("num_ids", std::int64_t{0});
  const auto in_features = model_config.value("in_features", std::int64_t{0});
  if (num_ids == inputs.num_ids && in_features == inputs.in_features) return;
  throw std::runtime_error(fmt::format(
      "{}: the model takes {} node features with {} identities, but store {} has {} node "
      "features ({}) with {} identities (node identity {}): evaluate it on a store preprocessed "
      "with the same --node-features and --node-identity",
      checkpoint.string(), in_features, num_ids, store.path().string(), inputs.in_features,
      fmt::join(store.metadata().node_features.group_names(), ","), inputs.num_ids,
      graph::node_identity_name(store.metadata().node_features.identity)));
}

const ModelFamily& model_family(std::string_view name) {
  for (const auto* family : registry())
    if (family->name() == name) return *family;
  throw std::invalid_argument(
      fmt::format("unknown model '{}' (known: {})", name, fmt::join(model_family_names(), ", ")));
}

const ClassifierFamily& classifier_family(std::string_view name) {
  const auto* family = dynamic_cast<const ClassifierFamily*>(&model_family(name));
  if (family == nullptr)
    throw std::invalid_argument(fmt::format("model '{}' is not a graph classifier", name));
  return *family;
}

const AutoencoderFamily& autoencoder_family(std::string_view name) {
  const auto* family = dynamic_cast<const AutoencoderFamily*>(&model_family(name));
  if (family == nullptr)
    throw std::invalid_argument(fmt::format("model '{}' is not a graph autoencoder", name));
  return *family;
}

std::vector<std::string_view> model_family_names(FamilyRole role) {
  std::vector<std::string_view> names;
  for (const auto* family : registry())
    if (family->role() == role) names.push_back(family->name());
  return names;
}

std::vector<std::string_view> model_family_names() {
  std::vector<std::string_view> names;
  for (const auto* family : registry()) names.push_back(family->name());
  return names;
}

// ModelOptions::validate lives here, beside the list it checks the family against.
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument(what); }

void require_positive(const std::optional<std::int64_t>& value, const char* flag) {
  if (value && *value < 1) fail(std::string(flag) + " must be at least 1");
}

}  // namespace

void ModelOptions::validate() const {
  model_family(family);  // throws for an unknown family, listing the known ones
  require_positive(hidden, "--hidden");
  require_positive(layers, "--layers");
  require_positive(heads, "--heads");
  require_positive(embedding_dim, "--embedding-dim");
  require_positive(fc_layers, "--fc-layers");
  require_positive(latent, "--latent");
  for (const auto width : vgae_hidden)
    if (width < 1) fail("--vgae-hidden widths must be at least 1");
  if (dropout && !(*dropout >= 0 && *dropout < 1)) fail("--dropout must lie in [0, 1)");
  try {
    models::parse_vgae_layout(vgae_layout);
  } catch (const std::invalid_argument& error) {
    fail(std::string("--vgae-layout: ") + error.what());
  }
}

}  // namespace headroom::train
