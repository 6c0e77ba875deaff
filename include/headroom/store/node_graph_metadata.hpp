// A node-graph store: one graph whose nodes are classified (TextGCN's documents and words), as
// opposed to the windows store's many small graphs (store_metadata.hpp). This header holds its
// array table and what its manifest records; docs/store-format.md documents the on-disk form.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/store/manifest_seal.hpp"
#include "headroom/store/store_metadata.hpp"

namespace headroom::store {

namespace node_graph_arrays {

// The graph, as compressed sparse rows (CSR): node i's neighbours are
// column_index[row_offsets[i] .. row_offsets[i+1]) (ascending, each once), with the edge weights
// beside them. Every undirected edge is stored in both rows; a self-loop once.
inline constexpr std::string_view kRowOffsets = "row_offsets";    // int64 [N + 1]
inline constexpr std::string_view kColumnIndex = "column_index";  // int32 [E]
inline constexpr std::string_view kEdgeWeight = "edge_weight";    // float32 [E]
// Per node.
inline constexpr std::string_view kNodeKind = "node_kind";    // uint8 [N]: index into node_kinds
inline constexpr std::string_view kNodeLabel = "node_label";  // int32 [N]: class, or -1 for none
inline constexpr std::string_view kNodeSplit = "node_split";  // uint8 [N]: NodeSplit

struct Spec {
  std::string_view name;
  std::string_view dtype;  // numpy name, as the manifest records it
  std::size_t element_bytes;
  std::string_view file_suffix;  // the file is name + suffix
  bool graph_data;               // one entry per edge: checksummed only on full verification
};

inline constexpr std::array<Spec, 6> kSpecs = {{
    {kRowOffsets, "int64", 8, ".i64", false},
    {kColumnIndex, "int32", 4, ".i32", true},
    {kEdgeWeight, "float32", 4, ".f32", true},
    {kNodeKind, "uint8", 1, ".u8", false},
    {kNodeLabel, "int32", 4, ".i32", false},
    {kNodeSplit, "uint8", 1, ".u8", false},
}};

constexpr const Spec& spec_of(std::string_view name) {
  for (const auto& spec : kSpecs)
    if (spec.name == name) return spec;
  throw "unknown array name";  // a compile-time error in constant evaluation
}

}  // namespace node_graph_arrays

// Which split a node is in. A node outside every split (a word) has no label to learn.
enum class NodeSplit : std::uint8_t { kNone = 0, kTrain = 1, kValidation = 2, kTest = 3 };
inline constexpr std::array<std::string_view, 4> kNodeSplitNames = {"none", "train", "validation",
                                                                    "test"};
inline constexpr std::int32_t kNoLabel = -1;

struct NodeGraphMetadata {
  std::string created_by;
  std::string source;           // the directory it was built from, as given
  std::uint64_t num_nodes = 0;  // N
  std::uint64_t num_edges = 0;  // E: stored entries (both directions of an edge; self-loops once)
  std::vector<std::string> node_kinds;  // the names of node_kind's values ("document", "word")
  std::vector<std::string> classes;     // the names of node_label's values
  std::vector<std::string> node_names;  // one per node: a document's name, a word itself
  double validation_fraction = 0.1;     // of the training nodes, held out (seeded)
  std::uint64_t validation_seed = 0;
  // How the graph was built: the builder's settings and what it found (for a text corpus: the
  // corpus file, its encoding, the cleaning, stop words, minimum count, window, edge counts).
  nlohmann::json build = nlohmann::json::object();
  std::map<std::string, ArrayRecord> arrays;  // by array name
};

// The manifest text (kind "node-graph"), sealed with its checksum.
std::string render_node_graph_manifest(const NodeGraphMetadata& metadata);
// Parses and checks an unsealed manifest (unseal_manifest) of kind "node-graph": the fields'
// types and that the name lists agree with the counts. Throws StoreError naming `where`.
NodeGraphMetadata node_graph_metadata_from(const nlohmann::json& manifest,
                                           const std::string& where);

// The kind of the store at `path` (kWindowsStoreKind, kNodeGraphStoreKind), read from its
// manifest (checksum checked). Throws StoreError naming the path when it holds no valid manifest.
std::string store_kind_at(const std::filesystem::path& path);

}  // namespace headroom::store
