// A batch of graphs as one disjoint-union graph: node rows of all graphs stacked, edge indices
// shifted by each graph's first node, and a membership vector mapping every node to its graph.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <vector>

namespace headroom::loader {

// Owns its tensors (they do not view the store). Not thread-safe to mutate; safe to share const.
struct GraphBatch {
  at::Tensor x;           // float32 [num_nodes, node_feature_count]; column 0 = CAN-ID index
  at::Tensor edge_index;  // int64 [2, num_edges], (source, target) rows, batch-global node indices
  at::Tensor edge_attr;   // float32 [num_edges, edge_feature_count]; undefined when not collated
  at::Tensor batch;       // int64 [num_nodes]: position (0..num_graphs-1) of the node's graph
  at::Tensor y;           // int64 [num_graphs]: graph labels (1 = attack)
  at::Tensor graph_ids;   // int64 [num_graphs]: store graph ids, in batch order
  // The same ids kept on the host when the batch moves to a device, so that reading them (teacher
  // cache lookups, re-collating after an OOM) never waits for the device. Shares graph_ids's
  // storage while the batch is on the host; undefined for a batch not made by collate().
  at::Tensor host_graph_ids;
  // Geometric stores only (docs/store-format.md, "Geometric stores"); each is undefined when the
  // store lacks its field:
  at::Tensor pos;     // float32 [num_nodes, D]: node positions, D = the store's position_dimensions
                      // (2 or 3), in the store's unit (QM9: ångström)
  at::Tensor parent;  // int64 [num_nodes]: batch-global index of the node's parent, -1 for a root
  at::Tensor target;  // float32 [num_graphs]: each graph's regression target (the store's float64
                      // rounded to float32), in the store's target_unit
  std::int64_t num_graphs = 0;
  std::int64_t num_nodes = 0;
  std::int64_t num_edges = 0;

  // A copy on `device` (the same object's tensors when already there). non_blocking needs the
  // source in pinned memory to overlap with compute.
  GraphBatch to(const c10::Device& device, bool non_blocking = false) const;
  // Bytes held by the batch's tensors.
  std::int64_t bytes() const;
  // The store graph ids as a host list (e.g. to re-collate parts of the batch); from
  // host_graph_ids when defined (no device synchronisation).
  std::vector<std::uint32_t> graph_id_list() const;
};

}  // namespace headroom::loader
