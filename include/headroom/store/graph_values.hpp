// The values a graph's arrays must hold before tensors are made of them. A store's checksums
// prove only that its files are the ones its writer wrote; a store written by another tool, or by
// a buggy one, can hold an edge pointing past its graph, a CAN-ID index past the vocabulary or a
// NaN feature, and each would train silently on garbage or fail deep inside LibTorch naming
// neither the store nor the graph. These checks name both.
#pragma once

#include <cstddef>

#include "headroom/store/graph_store.hpp"

namespace headroom::store {

// What of a graph to check. Edge features are read only by models that use them.
struct GraphValueChecks {
  bool edge_features = true;
};

// Throws StoreError naming the store, the array, the graph id and the offending row when graph
// `graph_id` (whose arrays `view` holds, as store.graph(graph_id) returns them) has:
//  - an edge_index entry outside [0, num_nodes) of its own graph;
//  - a node whose CAN-ID index (node feature 0) is not a whole number in [0, vocabulary size]
//    (the last value being the out-of-vocabulary index);
//  - a node feature, or (when checks.edge_features) an edge feature, that is NaN or infinite;
//  - in a geometric store, a position that is NaN or infinite, or a parent that is neither -1
//    nor a node of the graph.
// Reads each value once (a few microseconds per graph); thread-safe.
void check_graph_values(const GraphStore& store, std::size_t graph_id, const GraphView& view,
                        GraphValueChecks checks = {});

}  // namespace headroom::store
