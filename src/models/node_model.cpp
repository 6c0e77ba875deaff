#include "headroom/models/node_model.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <algorithm>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "headroom/models/node_gat.hpp"
#include "headroom/models/node_gcn.hpp"

namespace headroom::models {

std::string_view to_string(NodeArchitecture architecture) {
  return architecture == NodeArchitecture::kGat ? "gat" : "gcn";
}

NodeArchitecture node_architecture(std::string_view name) {
  if (name == "gcn") return NodeArchitecture::kGcn;
  if (name == "gat") return NodeArchitecture::kGat;
  throw std::invalid_argument(
      fmt::format("node model '{}': the node task trains 'gcn' or 'gat'", name));
}

void NodeModelConfig::validate() const {
  const auto name = to_string(architecture);
  if (num_nodes <= 0 || hidden <= 0 || num_classes <= 0 || heads <= 0)
    throw std::invalid_argument(
        fmt::format("node {}: nodes, hidden width, heads and classes must be positive", name));
  if (!(dropout >= 0 && dropout < 1))
    throw std::invalid_argument(fmt::format("node {}: dropout must be in [0, 1)", name));
  if (architecture == NodeArchitecture::kGcn && heads != 1)
    throw std::invalid_argument("node gcn: a GCN has no attention heads (heads must be 1)");
}

std::int64_t NodeModelConfig::parameter_count() const {
  const auto width = hidden_width();
  if (architecture == NodeArchitecture::kGcn) return (num_nodes + num_classes) * width;
  // W1, its attention vectors and bias; W2, its attention vectors and bias.
  return num_nodes * width + 3 * width + width * num_classes + 3 * num_classes;
}

void to_json(nlohmann::json& json, const NodeModelConfig& config) {
  json = {{"architecture", to_string(config.architecture)},
          {"num_nodes", config.num_nodes},
          {"hidden", config.hidden},
          {"heads", config.heads},
          {"num_classes", config.num_classes},
          {"dropout", config.dropout}};
}

void from_json(const nlohmann::json& json, NodeModelConfig& config) {
  config.architecture = node_architecture(json.value("architecture", std::string("gcn")));
  json.at("num_nodes").get_to(config.num_nodes);
  json.at("hidden").get_to(config.hidden);
  config.heads = json.value("heads", std::int64_t{1});
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
  const auto name = to_string(config_.architecture);
  if (torch::GradMode::is_enabled())
    throw std::logic_error(fmt::format("node {}: {} runs without autograd", name, what));
  if (blocks.rows <= 0 || blocks.entries <= 0)
    throw std::invalid_argument(
        fmt::format("node {}: an inference block needs at least one row and entry", name));
}

NodeModel make_node_model(const NodeModelConfig& config) {
  if (config.architecture == NodeArchitecture::kGat) return std::make_shared<NodeGatImpl>(config);
  return std::make_shared<NodeGcnImpl>(config);
}

}  // namespace headroom::models
