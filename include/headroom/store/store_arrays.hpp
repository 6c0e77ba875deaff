// The arrays of a graph store: their names, file names and element types. One place, so the
// writer, the reader and the docs agree.
#pragma once

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

inline constexpr std::uint32_t kOutOfVocabularyCanId = 0xFFFFFFFFU;

}  // namespace headroom::store::arrays
