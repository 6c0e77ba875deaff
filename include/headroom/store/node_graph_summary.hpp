// What `headroom inspect` says about a node-graph store: nodes by kind, edges by kind (by the
// kinds of their two ends; self-loops apart), degree distribution per node kind, splits, classes,
// bytes per array, and how it was built. Reads every row once (the column index: 4 bytes per
// stored edge, from the page cache). Stateless and thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/store/node_graph_store.hpp"

namespace headroom::store {

// Neighbours per node (its self-loop not counted).
struct DegreeStatistics {
  std::uint64_t min = 0, p50 = 0, p95 = 0, max = 0;
  double mean = 0;
};

struct NodeGraphSummary {
  std::filesystem::path path;
  std::uint64_t nodes = 0;
  std::uint64_t stored_edges = 0;  // CSR entries: both directions of an edge, self-loops once
  std::vector<std::pair<std::string, std::uint64_t>> nodes_by_kind;
  // Undirected edges by the kinds of their ends ("document-word", "word-word"), then "self-loop".
  std::vector<std::pair<std::string, std::uint64_t>> edges_by_kind;
  std::vector<std::pair<std::string, DegreeStatistics>> degree_by_kind;
  std::vector<std::pair<std::string, std::uint64_t>> nodes_by_split;  // train, validation, test
  std::vector<std::pair<std::string, std::uint64_t>> nodes_by_class;
  std::vector<std::pair<std::string, std::uint64_t>> bytes_by_array;
  std::uint64_t bytes_on_disk = 0;
  nlohmann::json build;
};

NodeGraphSummary summarize_node_graph(const NodeGraphStore& store);
std::string render_node_graph_summary(const NodeGraphSummary& summary);
nlohmann::json node_graph_summary_to_json(const NodeGraphSummary& summary);

}  // namespace headroom::store
