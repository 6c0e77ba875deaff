// The registered node models, in the order --help lists them (the default first). Adding one: its
// file beside this one, defining NAME_node_model(), and its line in the list below.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <stdexcept>

#include "headroom/models/node_model_kind.hpp"

namespace headroom::models {
namespace kinds {
const NodeModelKind& gcn_node_model();
const NodeModelKind& gat_node_model();
const NodeModelKind& sgc_node_model();
}  // namespace kinds

namespace {

const auto& registry() {
  static const std::array kinds = {
      &kinds::gcn_node_model(),
      &kinds::gat_node_model(),
      &kinds::sgc_node_model(),
  };
  return kinds;
}

}  // namespace

const NodeModelKind& node_model_kind(std::string_view name) {
  for (const auto* kind : registry())
    if (kind->name() == name) return *kind;
  throw std::invalid_argument(fmt::format("unknown node model '{}' (known: {})", name,
                                          fmt::join(node_model_names(), ", ")));
}

std::vector<std::string_view> node_model_names() {
  std::vector<std::string_view> names;
  for (const auto* kind : registry()) names.push_back(kind->name());
  return names;
}

}  // namespace headroom::models
