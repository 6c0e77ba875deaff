// The adjacency a fused graph-attention kernel walks, built once per batch from an edge list and
// shared by every attention layer of a forward pass (and by the recomputation of a checkpointed
// layer). Two orders of the same edges:
//  - by target (CSR): a destination node's incoming edges are contiguous, so the softmax over
//    them and the weighted sum of their sources run in one pass with no atomics;
//  - by source: a node's outgoing edges are contiguous, so the backward pass gathers the
//    gradient of each source feature row without atomics (deterministic on every device).
// Self loops are not part of the lists: a kernel adds exactly one per node and skips any
// self-loop edge in the input, which is what PyG's remove_self_loops + add_self_loops do, without
// counting the kept edges (a host synchronisation on CUDA).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace headroom::nn {

struct AttentionGraph {
  std::int64_t num_nodes = 0;
  at::Tensor edge_index;  // the input int64 [2, E] (shared, not copied)
  // All int64 on the edge list's device. E = number of input edges (self loops included).
  at::Tensor target_offsets;      // [N + 1]: incoming edges of node i at [offsets[i], offsets[i+1])
  at::Tensor source_by_target;    // [E]: source node of each edge in target order
  at::Tensor source_offsets;      // [N + 1]: outgoing edges of node j in source order
  at::Tensor target_by_source;    // [E]: target node of each edge in source order
  at::Tensor position_by_source;  // [E]: where each source-order edge sits in target order
  at::Tensor target_order;        // [E]: input edge index of each target-order edge

  std::int64_t num_edges() const { return source_by_target.size(0); }
};

// Builds both orders with device operations only (stable sorts, index_add, cumsum): no host
// synchronisation on CUDA. edge_index: int64 [2, E], row 0 source, row 1 target, every entry in
// [0, num_nodes) (index_add checks this, on CUDA with a device-side assertion).
AttentionGraph build_attention_graph(const at::Tensor& edge_index, std::int64_t num_nodes);

}  // namespace headroom::nn
