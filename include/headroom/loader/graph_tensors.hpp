// Zero-copy torch tensors over a graph store's memory-mapped arrays. The tensors are read-only
// (the mapping is PROT_READ: writing to them faults) and keep their mapping alive on their own,
// so they stay valid after the store::GraphStore object is gone.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string_view>

#include "headroom/store/graph_store.hpp"

namespace headroom::loader {

struct GraphTensors {
  at::Tensor x;           // float32 [num_nodes, node_feature_count]
  at::Tensor edge_index;  // int32 [2, num_edges]: a transposed view of the stored [num_edges, 2]
  at::Tensor edge_attr;   // float32 [num_edges, edge_feature_count]
  std::int64_t y = 0;     // graph label
};

// One graph's tensors, viewing the store's mappings (no copy).
GraphTensors graph_tensors(const store::GraphStore& store, std::size_t graph_id);

// A whole array as one tensor (no copy), shaped as the manifest records it.
at::Tensor array_tensor(const store::GraphStore& store, std::string_view name);

}  // namespace headroom::loader
