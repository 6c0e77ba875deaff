// The arrays of a graph store: their names, file names and element types. One place, so the
// writer, the reader and the docs agree.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace headroom::store::arrays {

// Graph data, concatenated over all graphs (CSR-like: graph g owns rows
// [node_offsets[g], node_offsets[g+1]) and [edge_offsets[g], edge_offsets[g+1])).
inline constexpr std::string_view kNodeFeatures = "node_features";  // float32 [N, 11]
inline constexpr std::string_view kNodeCanIds = "node_can_ids";     // uint32 [N]; 0xFFFFFFFF = OOV
inline constexpr std::string_view kEdgeIndex = "edge_index";        // int32 [E, 2], local indices
inline constexpr std::string_view kEdgeFeatures = "edge_features";  // float32 [E, 11]
inline constexpr std::string_view kNodeOffsets = "node_offsets";    // int64 [G + 1]
inline constexpr std::string_view kEdgeOffsets = "edge_offsets";    // int64 [G + 1]

// The size index: per graph, readable without touching the graph data.
inline constexpr std::string_view kGraphNumNodes = "graph_num_nodes";      // uint32 [G]
inline constexpr std::string_view kGraphNumEdges = "graph_num_edges";      // uint32 [G]
inline constexpr std::string_view kGraphLabel = "graph_label";             // uint8 [G]
inline constexpr std::string_view kGraphSplit = "graph_split";             // uint16 [G]
inline constexpr std::string_view kGraphFile = "graph_file";               // uint32 [G]
inline constexpr std::string_view kGraphAttackType = "graph_attack_type";  // uint16 [G]
inline constexpr std::string_view kGraphWindow = "graph_window";           // uint32 [G]

// Index lists into the graphs (ascending graph ids).
inline constexpr std::string_view kSplitTrain = "split_train";            // uint32
inline constexpr std::string_view kSplitValidation = "split_validation";  // uint32
inline constexpr std::string_view kSplitTest = "split_test";              // uint32

// Geometric stores only (docs/store-format.md, "Geometric stores"): present exactly when the
// manifest's "geometry" (positions, path counts), "geometry.parents" or "graph_target" says so.
inline constexpr std::string_view kNodePositions = "node_positions";  // float32 [N, D], D = 2 or 3
inline constexpr std::string_view kNodeParent = "node_parent";        // int32 [N], local; -1 = root
// Size index: per graph, its 1st-, 2nd- and 3rd-order paths (store/graph_paths.hpp).
inline constexpr std::string_view kGraphNumPaths = "graph_num_paths";  // uint32 [G, 3]
inline constexpr std::string_view kGraphTarget = "graph_target";       // float64 [G]

inline constexpr std::uint32_t kOutOfVocabularyCanId = 0xFFFFFFFFU;

// What the writer produces and the reader requires, per array.
struct ArraySpec {
  std::string_view name;
  std::string_view dtype;  // numpy name, as the manifest records it
  std::size_t element_bytes;
  std::string_view file_suffix;  // the file is name + suffix
  bool graph_data;               // large graph data: checksummed only on full verification
  bool optional;                 // only in stores whose manifest asks for it (geometric stores)
};

inline constexpr std::array<ArraySpec, 20> kArraySpecs = {{
    {kNodeFeatures, "float32", 4, ".f32", true, false},
    {kNodeCanIds, "uint32", 4, ".u32", true, false},
    {kEdgeIndex, "int32", 4, ".i32", true, false},
    {kEdgeFeatures, "float32", 4, ".f32", true, false},
    {kNodeOffsets, "int64", 8, ".i64", false, false},
    {kEdgeOffsets, "int64", 8, ".i64", false, false},
    {kGraphNumNodes, "uint32", 4, ".u32", false, false},
    {kGraphNumEdges, "uint32", 4, ".u32", false, false},
    {kGraphLabel, "uint8", 1, ".u8", false, false},
    {kGraphSplit, "uint16", 2, ".u16", false, false},
    {kGraphFile, "uint32", 4, ".u32", false, false},
    {kGraphAttackType, "uint16", 2, ".u16", false, false},
    {kGraphWindow, "uint32", 4, ".u32", false, false},
    {kSplitTrain, "uint32", 4, ".u32", false, false},
    {kSplitValidation, "uint32", 4, ".u32", false, false},
    {kSplitTest, "uint32", 4, ".u32", false, false},
    {kNodePositions, "float32", 4, ".f32", true, true},
    {kNodeParent, "int32", 4, ".i32", true, true},
    {kGraphNumPaths, "uint32", 4, ".u32", false, true},
    {kGraphTarget, "float64", 8, ".f64", false, true},
}};

// The spec of a named array; every name above has one.
constexpr const ArraySpec& spec_of(std::string_view name) {
  for (const auto& spec : kArraySpecs) {
    if (spec.name == name) return spec;
  }
  throw "unknown array name";  // a compile-time error in constant evaluation
}

}  // namespace headroom::store::arrays
