// `headroom import-graphs`: a graph-classification dataset that is not CAN traffic, given as three
// Parquet tables in one directory (docs/store-format.md, "Graph tables"), streamed into a graph
// store (store/graph_dataset_writer.hpp) so that the planner, the byte packer and the training
// commands work on it:
//
//   graphs.parquet  one row per graph, in graph order: label (integer or boolean, 0 or 1) and,
//                   optionally, split (string "train" or "test"; without it every graph trains).
//                   Other columns are not read.
//   nodes.parquet   one row per node: graph (integer, the graph's row in graphs.parquet), then
//                   every other column is a node feature (float, double, integer or boolean), in
//                   schema order, except a geometric store's: pos_x, pos_y (and pos_z), each
//                   node's position, and parent (integer; -1 or null for a root), each node's
//                   parent in a tree. A graph's nodes are numbered 0, 1, ... in row order.
//   edges.parquet   one row per directed edge: graph, source, target (integers, the graph's own
//                   node numbers); every other column is an edge feature.
//
// Rows of nodes and edges are grouped by graph, in increasing graph order (how a per-graph loop or
// a sort by graph writes them); a graph may have no edges but not no nodes. Memory is bounded by
// one record batch per table plus the largest graph, never by the dataset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace headroom::graph_tables {

inline constexpr const char* kGraphsFile = "graphs.parquet";
inline constexpr const char* kNodesFile = "nodes.parquet";
inline constexpr const char* kEdgesFile = "edges.parquet";

struct ImportOptions {
  // 0: every node gets one identity class (a zero column is put before the node features).
  // K > 0: the first node feature column is each node's class, a whole number in [0, K) (an atom
  // type, a node label), which headroom's models embed.
  std::uint32_t identity_classes = 0;
  double validation_fraction = 0.2;  // of the training graphs, drawn at random (seeded)
  std::uint64_t seed = 0;
  bool overwrite = false;  // replace a graph store (never anything else)
  std::size_t batch_rows = 65536;
  // Refuse a nodes.parquet without positions (--geometric): a store for a geometric encoder.
  bool require_positions = false;
  std::string created_by{};  // recorded in the store's manifest
  // Called after every 1024 graphs and at the end with the graphs written and the graphs in
  // graphs.parquet; may be empty.
  std::function<void(std::uint64_t done, std::uint64_t total)> progress{};
};

struct ImportSummary {
  std::uint64_t graphs = 0;
  std::uint64_t test_graphs = 0;
  std::uint64_t nodes = 0;
  std::uint64_t edges = 0;
  std::uint32_t node_features = 0;  // identity included
  std::uint32_t edge_features = 0;
};

// Writes the store at `store` atomically (nothing is left behind on failure). Throws
// util::InputError naming the file, the 1-based row and the column for bad input: a missing
// table or column, a mistyped column, a null, a label other than 0/1, a split other than
// train/test, rows out of graph order or naming a graph graphs.parquet lacks, a graph without
// nodes, an edge endpoint outside its graph, a feature that is not finite, an identity that is
// not a class; a position that is null or not finite, a pos_* column other than pos_x/y/z, a
// parent outside its graph or on a cycle, no positions under require_positions; a graph whose
// path counts overflow the store's counter (graphs.parquet, the graph's row). Throws what
// GraphDatasetWriter throws for the store path (an existing path that is
// not a replaceable store).
ImportSummary import_graph_tables(const std::filesystem::path& directory,
                                  const std::filesystem::path& store, const ImportOptions& options);

}  // namespace headroom::graph_tables
