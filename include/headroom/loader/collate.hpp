// Collation of store graphs into one GraphBatch: one pass per array over the store's mapped
// memory (a contiguous copy of each graph's row range), no per-graph tensor objects.
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
// the store, array and graph for values no tensor may be built from (store/graph_values.hpp),
// before any tensor is allocated.
GraphBatch collate(const store::GraphStore& store, std::span<const std::uint32_t> graph_ids,
                   const CollateOptions& options = {});

}  // namespace headroom::loader
