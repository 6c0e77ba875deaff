// The peak memory of a full-batch node-classification step on one big graph, predicted before
// training: the real step (TextGCN's model, Adam, the cross-entropy over the training nodes) is
// measured on subgraphs induced by random fractions of the graph's nodes (store/node_subgraph.hpp),
// memory/'s least-squares fit over {1, nodes, entries} is fitted to those peaks
// (memory/peak_model.hpp), and it predicts the whole graph. The identity layer's weights, their
// gradient and Adam's state grow with the nodes; activations with nodes and width; the adjacency
// with its entries on a device (on the CPU it stays the store's mapping, not tensor memory).
// Mutates process-wide state (peak counters, torch's generator for the probe models' weights):
// not to be run concurrently with training in the same process.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "headroom/memory/peak_model.hpp"
#include "headroom/models/node_gcn.hpp"
#include "headroom/store/node_graph_store.hpp"
#include "headroom/train/step/step_probe.hpp"

namespace headroom::train {

// Shares of the graph's nodes the probes take: small enough to be cheap (entries fall with the
// square of the share), spread enough to tell the per-node from the per-entry bytes.
inline constexpr double kNodeProbeFractions[] = {0.05, 0.1, 0.2, 0.3};

struct NodeFullBatchPlan {
  std::vector<memory::PeakSample> samples;  // nodes, edges = entries, graphs = 1
  memory::PeakFit fit;
  std::int64_t nodes = 0;      // the whole graph's
  std::int64_t entries = 0;    // the whole graph's stored entries
  double predicted_bytes = 0;  // the whole graph's full-batch step
};

// Probes full-batch steps of a model shaped like `model` (num_nodes set to each subgraph's) on the
// subgraphs induced by `fractions` of the store's nodes, drawn with `seed`; each subgraph needs a
// training node (a tiny graph's smallest shares are raised until it has one). Throws
// std::invalid_argument for a graph without training nodes; an OOM in a probe propagates.
NodeFullBatchPlan plan_node_full_batch(const store::NodeGraphStore& store,
                                       const models::NodeGcnConfig& model,
                                       const PeakProbeOptions& options, std::uint64_t seed,
                                       std::span<const double> fractions = kNodeProbeFractions);

// The measured peak of one full-batch step on the subgraph induced by `nodes` (ascending) of
// `store`, as plan_node_full_batch measures each probe: a PeakSample of its nodes and entries
// whose peak counts the step's own bytes, not what was live before it (the stage's own model).
memory::PeakSample measure_node_full_batch(const store::NodeGraphStore& store,
                                           std::span<const std::uint32_t> nodes,
                                           const models::NodeGcnConfig& model,
                                           const PeakProbeOptions& options);

// One line for a run's log: the prediction, what it rests on, and the budget it is held to.
std::string describe_node_plan(const NodeFullBatchPlan& plan, std::int64_t budget_bytes);

}  // namespace headroom::train
