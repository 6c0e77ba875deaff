// The registered model families, in the order --help lists them. Adding a family: its file beside
// this one, defining families::NAME_family(), and its line in the list below.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

#include "headroom/train/model_family.hpp"

namespace headroom::train {
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

std::vector<std::string_view> model_family_names() {
  std::vector<std::string_view> names;
  for (const auto* family : registry()) names.push_back(family->name());
  return names;
}

}  // namespace headroom::train
