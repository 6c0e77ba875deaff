#include "headroom/graph/node_features.hpp"

#include <stdexcept>

namespace headroom::graph {

std::vector<std::string> NodeFeatureOptions::group_names() const {
  if (identity == NodeIdentity::kGiven) return {"given"};
  std::vector<std::string> names{"kd-gat"};
  if (timing) names.emplace_back("timing");
  if (payload) names.emplace_back("payload");
  return names;
}

std::string_view node_identity_name(NodeIdentity identity) {
  switch (identity) {
    case NodeIdentity::kCanId:
      return "can-id";
    case NodeIdentity::kFrequencyRank:
      return "frequency-rank";
    case NodeIdentity::kHashedId:
      return "hashed-id";
    case NodeIdentity::kGiven:
      return "given";
  }
  return "can-id";
}

NodeIdentity parse_node_identity(std::string_view name) {
  for (const auto identity : {NodeIdentity::kCanId, NodeIdentity::kFrequencyRank,
                              NodeIdentity::kHashedId, NodeIdentity::kGiven}) {
    if (name == node_identity_name(identity)) return identity;
  }
  throw std::invalid_argument(
      "node identity must be can-id, frequency-rank, hashed-id or given, not '" +
      std::string(name) + "'");
}

void parse_feature_groups(const std::vector<std::string>& groups, NodeFeatureOptions& options) {
  options.timing = false;
  options.payload = false;
  for (const auto& group : groups) {
    if (group == "kd-gat") continue;
    if (group == "timing") {
      options.timing = true;
    } else if (group == "payload") {
      options.payload = true;
    } else {
      throw std::invalid_argument("node feature groups are kd-gat, timing and payload, not '" +
                                  group + "'");
    }
  }
}

std::uint32_t identity_classes(const NodeFeatureOptions& options, std::size_t vocabulary_size) {
  switch (options.identity) {
    case NodeIdentity::kGiven:
      return options.given_classes;
    case NodeIdentity::kFrequencyRank:
      return kFrequencyRankClasses;
    case NodeIdentity::kHashedId:
      return kHashedIdClasses;
    case NodeIdentity::kCanId:
      break;
  }
  return static_cast<std::uint32_t>(vocabulary_size + 1);
}

std::uint32_t hashed_identity(std::uint32_t can_id) {
  // A 32-bit finaliser (murmur3's fmix32): neighbouring IDs land in unrelated buckets.
  std::uint32_t h = can_id;
  h ^= h >> 16;
  h *= 0x85ebca6bU;
  h ^= h >> 13;
  h *= 0xc2b2ae35U;
  h ^= h >> 16;
  return h % kHashedIdClasses;
}

}  // namespace headroom::graph
