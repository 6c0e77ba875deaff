// Packing training batches by predicted memory instead of by graph count: graph sizes vary widely,
// so a fixed batch size either wastes most of the device or runs out of memory on the batch that
// happens to collect the largest graphs. A linear cost model fitted by the planner predicts the
// peak bytes of one training step for a batch, and batches are filled greedily up to a byte budget.
//
// Everything here is a pure function of its arguments: thread-safe as long as the spans are not
// written to concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace headroom::memory {

// Peak bytes of one training step for a batch, as a linear function of its total node count, total
// edge count and graph count. All coefficients are in bytes (per node / edge / graph). The planner
// fits them; they should be non-negative so that adding a graph never lowers the prediction (the
// packer does not rely on it: it checks every graph alone and every batch as it grows).
struct ByteCostModel {
  double fixed_bytes = 0.0;  // independent of the batch (parameters, optimizer state, workspace)
  double bytes_per_node = 0.0;
  double bytes_per_edge = 0.0;
  double bytes_per_graph = 0.0;

  double predict(std::uint64_t nodes, std::uint64_t edges, std::uint64_t graphs) const {
    return fixed_bytes + bytes_per_node * static_cast<double>(nodes) +
           bytes_per_edge * static_cast<double>(edges) +
           bytes_per_graph * static_cast<double>(graphs);
  }
};

// The batches of one epoch, in training order. predicted_bytes[i] is model.predict() of batches[i]
// (its summed nodes and edges, and its graph count); every value is <= the budget it was packed
// for.
struct PackedEpoch {
  std::vector<std::vector<std::uint32_t>> batches;  // graph ids; none empty
  std::vector<double> predicted_bytes;              // parallel to batches
};

// Thrown when a single graph's predicted bytes exceed the budget, so no batch can hold it.
class OversizeGraphError : public std::runtime_error {
 public:
  OversizeGraphError(std::uint32_t graph_id, std::uint64_t nodes, std::uint64_t edges,
                     double predicted_bytes, double budget_bytes);

  std::uint32_t graph_id() const { return graph_id_; }
  std::uint64_t nodes() const { return nodes_; }
  std::uint64_t edges() const { return edges_; }
  double predicted_bytes() const { return predicted_bytes_; }
  double budget_bytes() const { return budget_bytes_; }

 private:
  std::uint32_t graph_id_;
  std::uint64_t nodes_;
  std::uint64_t edges_;
  double predicted_bytes_;
  double budget_bytes_;
};

// Splits `ordered_ids` (already shuffled by the caller) into consecutive batches, keeping the
// order: a graph joins the open batch while the batch's prediction with it stays <= budget_bytes
// and, when max_graphs > 0, its graph count stays <= max_graphs; otherwise the batch is closed and
// the graph starts the next one. The concatenation of the batches is `ordered_ids` itself (an id
// repeated in the input is packed once per occurrence). num_nodes and num_edges are indexed by
// graph id (the store's size index). O(n) time and memory.
//
// Throws std::invalid_argument when budget_bytes is not a positive finite number, a model
// coefficient is not finite, or num_nodes and num_edges differ in length; std::out_of_range naming
// the first id outside the size arrays; OversizeGraphError for the first graph (in order) whose
// predict(nodes, edges, 1) exceeds the budget.
PackedEpoch pack_by_bytes(std::span<const std::uint32_t> ordered_ids,
                          std::span<const std::uint32_t> num_nodes,
                          std::span<const std::uint32_t> num_edges, const ByteCostModel& model,
                          double budget_bytes, std::size_t max_graphs = 0);

}  // namespace headroom::memory
