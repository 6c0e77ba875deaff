// Collation of store graphs into one GraphBatch: one pass over the graphs, copying each graph's
// row ranges from the store's mapped memory (a contiguous copy per array) and checking its values
// while they are in cache; no per-graph tensor objects.
#pragma once

#include <cstdint>
#include <span>

#include "headroom/loader/graph_batch.hpp"
#include "headroom/store/graph_store.hpp"

namespace headroom::loader {

struct CollateOptions {
  bool edge_features = false;  // the KD-GAT models do not read edge features; skip copying them
  bool pin_memory = false;     // allocate in pinned host memory (for asynchronous CUDA copies)
};

// Graphs appear in the order of `graph_ids`. Thread-safe (the store is immutable).
// Throws std::out_of_range for an id past the store's graph count, and store::StoreError naming
// the store, array and graph for values no batch may hold (store/graph_values.hpp): each graph is
// checked as it is copied in, and a batch with a bad value is never returned.
GraphBatch collate(const store::GraphStore& store, std::span<const std::uint32_t> graph_ids,
                   const CollateOptions& options = {});

}  // namespace headroom::loader
