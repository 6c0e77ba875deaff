// The summary `headroom inspect` prints: graphs per split, node and edge counts at p50/p95/max,
// label balance, how much of each split is out of the training vocabulary, and bytes on disk.
// Computed from the size index and the metadata alone (no graph is read).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "headroom/store/graph_store.hpp"

namespace headroom::store {

struct CountDistribution {
  std::uint64_t p50 = 0;  // nearest-rank percentiles
  std::uint64_t p95 = 0;
  std::uint64_t max = 0;
};

struct SplitSummary {
  std::string name;  // "train", "validation", "test", or "test/<directory>"
  std::uint64_t graphs = 0;
  std::uint64_t attack_graphs = 0;
  CountDistribution nodes;
  CountDistribution edges;
  // Windows whose frames are mostly (more than half) CAN IDs outside the training vocabulary,
  // counted by preprocess (SourceFileRecord): on an unseen vehicle most IDs are unknown, and the
  // window graph collapses onto the one out-of-vocabulary node.
  std::uint64_t mostly_unknown_graphs = 0;
};

struct FileSummary {
  std::string path;  // relative to the dataset root
  std::string split;
  std::string attack_type;
  std::uint64_t rows = 0;
  std::uint64_t skipped_rows = 0;
  std::uint64_t graphs = 0;
};

struct StoreSummary {
  std::string path;
  std::uint64_t graphs = 0;
  std::uint64_t nodes = 0;
  std::uint64_t edges = 0;
  std::uint64_t bytes_on_disk = 0;
  std::uint32_t window = 0;
  std::uint32_t stride = 0;
  std::size_t vocabulary_size = 0;
  std::string vocabulary_from = "all";   // StoreMetadata::vocabulary_from
  std::string node_identity = "can-id";  // graph::node_identity_name
  std::vector<std::string> node_feature_groups = {"kd-gat"};
  std::uint32_t node_feature_count = 0;
  CountDistribution nodes_per_graph;
  CountDistribution edges_per_graph;
  std::vector<SplitSummary> splits;
  std::vector<FileSummary> files;
};

StoreSummary summarize_store(const GraphStore& store);
// One line per test split whose windows are mostly out of vocabulary (more than half of them):
// what `inspect` and `preprocess` warn about.
std::vector<std::string> vocabulary_warnings(const StoreSummary& summary);
// One line per split that holds windows but not one attack label (unlabelled logs such as candump,
// or attack-free recordings only): "train" (the classifiers have no attack to learn), "validation"
// (when training has attacks), each "test/<directory>" (detection cannot be measured there: only
// false alarms). What `inspect` and `preprocess` warn about.
// The warnings are messages: the split names in them are escaped (util::printable_name).
std::vector<std::string> label_warnings(const StoreSummary& summary);
// Names and paths as they are (JSON escapes them); the warnings as above.
nlohmann::json summary_to_json(const StoreSummary& summary);
// The human-readable table, every name and path in it escaped.
std::string render_summary(const StoreSummary& summary);

}  // namespace headroom::store
