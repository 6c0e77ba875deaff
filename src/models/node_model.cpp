#include "headroom/models/node_model.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <algorithm>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "headroom/models/node_model_kind.hpp"

namespace headroom::models {

void NodeModelConfig::validate() const {
  const auto& kind = node_model_kind(architecture);
  if (num_nodes <= 0 || hidden <= 0 || num_classes <= 0 || heads <= 0 || layers <= 0)
    throw std::invalid_argument(fmt::format(
        "node {}: nodes, hidden width, heads, layers and classes must be positive", architecture));
  if (!(dropout >= 0 && dropout < 1))
    throw std::invalid_argument(fmt::format("node {}: dropout must be in [0, 1)", architecture));
  kind.validate(*this);
}

std::int64_t NodeModelConfig::parameter_count() const {
  return node_model_kind(architecture).parameter_count(*this);
}

void to_json(nlohmann::json& json, const NodeModelConfig& config) {
  json = {{"architecture", config.architecture},
          {"num_nodes", config.num_nodes},
          {"hidden", config.hidden},
          {"heads", config.heads},
          {"layers", config.layers},
          {"num_classes", config.num_classes},
          {"dropout", config.dropout}};
}

void from_json(const nlohmann::json& json, NodeModelConfig& config) {
  config.architecture = json.value("architecture", std::string("gcn"));
  node_model_kind(config.architecture);  // throws for an unknown one, listing the known ones
  json.at("num_nodes").get_to(config.num_nodes);
  json.at("hidden").get_to(config.hidden);
  config.heads = json.value("heads", std::int64_t{1});
  config.layers = json.value("layers", std::int64_t{2});
  json.at("num_classes").get_to(config.num_classes);
  json.at("dropout").get_to(config.dropout);
}

NodeModelImpl::NodeModelImpl(const NodeModelConfig& config) : config_(config) {
  config_.validate();
}

std::int64_t inference_block_end(const std::int64_t* offsets, const std::int64_t* ids,
                                 std::int64_t first, std::int64_t count,
                                 const InferenceBlocks& blocks) {
  const auto last = std::min(count, first + blocks.rows);
  std::int64_t entries = 0;
  auto end = first;
  for (; end < last; ++end) {
    const auto row = ids == nullptr ? end : ids[end];
    entries += offsets[row + 1] - offsets[row];
    if (entries > blocks.entries && end > first) break;
  }
  return end;
}

void NodeModelImpl::require_inference(const char* what, const InferenceBlocks& blocks) const {
  const auto& name = config_.architecture;
  if (torch::GradMode::is_enabled())
    throw std::logic_error(fmt::format("node {}: {} runs without autograd", name, what));
  if (blocks.rows <= 0 || blocks.entries <= 0)
    throw std::invalid_argument(
        fmt::format("node {}: an inference block needs at least one row and entry", name));
}

NodeModel make_node_model(const NodeModelConfig& config) {
  config.validate();
  return node_model_kind(config.architecture).build(config);
}

}  // namespace headroom::models
