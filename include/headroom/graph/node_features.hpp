// Which node features a window graph carries: the KD-GAT set (always; docs/graph-construction.md)
// and optional groups that do not depend on one vehicle's CAN-ID set (docs/detection.md), plus
// what feature 0, the node's identity, holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace headroom::graph {

inline constexpr std::size_t kKdGatNodeFeatureCount = 11;
// Timing group: mean inter-arrival / window duration, squashed coefficient of variation of the
// inter-arrival times, shortest / mean inter-arrival, squashed window duration.
inline constexpr std::size_t kTimingNodeFeatureCount = 4;
// Payload group: byte entropy, bit-flip rate, byte-change rate, mean DLC.
inline constexpr std::size_t kPayloadNodeFeatureCount = 4;

// What feature 0 of a node is; the embedding of every model looks it up.
enum class NodeIdentity {
  kCanId,          // the CAN ID's vocabulary index (upstream); unknown IDs share one index
  kFrequencyRank,  // the node's rank by frame count within its window (ties: lower CAN ID first)
  kHashedId,       // a hash of the raw CAN ID into kHashedIdClasses buckets
  // A class index the dataset itself gives: graphs that are not CAN windows, written into a store
  // from outside (store/graph_dataset_writer.hpp). The feature count and the class count are the
  // dataset's (NodeFeatureOptions::given_features, given_classes). Never built from CAN logs.
  kGiven,
};
// Ranks from kFrequencyRankClasses - 1 on share the last class.
inline constexpr std::uint32_t kFrequencyRankClasses = 32;
inline constexpr std::uint32_t kHashedIdClasses = 256;

struct NodeFeatureOptions {
  NodeIdentity identity = NodeIdentity::kCanId;
  bool timing = false;
  bool payload = false;
  // Under kGiven only (0 otherwise): the dataset's features per node, feature 0 included, and the
  // number of distinct values feature 0 takes.
  std::uint32_t given_features = 0;
  std::uint32_t given_classes = 0;

  // Node features per node: 11, plus each group's; under kGiven, the dataset's.
  std::size_t count() const {
    if (identity == NodeIdentity::kGiven) return given_features;
    return kKdGatNodeFeatureCount + (timing ? kTimingNodeFeatureCount : 0) +
           (payload ? kPayloadNodeFeatureCount : 0);
  }
  // The feature groups in store order: "kd-gat" first, then "timing", "payload"; under kGiven the
  // one group "given".
  std::vector<std::string> group_names() const;
  bool operator==(const NodeFeatureOptions&) const = default;
};

std::string_view node_identity_name(NodeIdentity identity);  // "can-id", "frequency-rank", ...
// Throws std::invalid_argument naming the choices ("given" included: a store's manifest may hold
// it; preprocess offers only the other three).
NodeIdentity parse_node_identity(std::string_view name);
// Sets timing and payload from group names ("kd-gat" is implied and may be listed); throws
// std::invalid_argument for an unknown group.
void parse_feature_groups(const std::vector<std::string>& groups, NodeFeatureOptions& options);

// Distinct values of feature 0: the model's embedding rows. `vocabulary_size` is K, whose index
// is the out-of-vocabulary one under kCanId; under kGiven, options.given_classes.
std::uint32_t identity_classes(const NodeFeatureOptions& options, std::size_t vocabulary_size);
// The kHashedId class of a raw CAN ID (a fixed integer hash, the same on every machine).
std::uint32_t hashed_identity(std::uint32_t can_id);

}  // namespace headroom::graph
