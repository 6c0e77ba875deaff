// The peak memory of a full-batch node-classification step on one big graph, predicted before
// training: the real step (the node model — TextGCN's GCN or the GAT —, Adam, the cross-entropy
// over the training nodes) is
// measured on subgraphs induced by random fractions of the graph's nodes (store/node_subgraph.hpp),
// memory/'s least-squares fit over {1, nodes, entries} is fitted to those peaks
// (memory/peak_model.hpp), and it predicts the whole graph. The identity layer's weights, their
// gradient and Adam's state grow with the nodes; activations with nodes and width; the adjacency
// with its entries on a device (on the CPU it stays the store's mapping, not tensor memory), and
// the GAT's attention graph and attention values with its entries everywhere.
// Mutates process-wide state (peak counters, torch's generator for the probe models' weights):
// not to be run concurrently with training in the same process.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "headroom/memory/peak_model.hpp"
#include "headroom/models/node_model.hpp"
#include "headroom/store/node_graph_store.hpp"
#include "headroom/train/step/step_probe.hpp"

namespace headroom::train {

// Shares of the graph's nodes the probes take: small enough to be cheap (entries fall with the
// square of the share), spread enough to tell the per-node from the per-entry bytes.
inline constexpr double kNodeProbeFractions[] = {0.05, 0.1, 0.2, 0.3};

struct NodeFullBatchPlan {
  std::vector<memory::PeakSample> samples;  // nodes, edges = entries, graphs = 1; each measured
  memory::PeakFit fit;                      // over `samples`; unset with fewer than 2
  std::int64_t nodes = 0;                   // the whole graph's
  std::int64_t entries = 0;                 // the whole graph's stored entries
  double predicted_bytes = 0;               // the whole graph's full-batch step (0: no fit)
  // The first probe the enforced memory budget refused (its subgraph's nodes): probing stopped
  // there, and the full batch does not fit.
  std::optional<std::int64_t> refused_nodes;

  // Whether the whole graph's step fits `budget_bytes`: no probe was refused and the prediction
  // is within it.
  bool fits(std::int64_t budget_bytes) const;
};

// Probes full-batch steps of a model shaped like `model` (num_nodes set to each subgraph's) on the
// subgraphs induced by `fractions` (ascending) of the store's nodes, drawn with `seed`; each
// subgraph needs a training node (a tiny graph's smallest shares are raised until it has one).
// Under an enforced memory budget (command_budget.hpp) a probe the budget refuses ends probing
// (refused_nodes): no sample is ever measured over the budget. Throws std::invalid_argument for a
// graph without training nodes.
NodeFullBatchPlan plan_node_full_batch(const store::NodeGraphStore& store,
                                       const models::NodeModelConfig& model,
                                       const PeakProbeOptions& options, std::uint64_t seed,
                                       std::span<const double> fractions = kNodeProbeFractions);

// The measured peak of one full-batch step on the subgraph induced by `nodes` (ascending) of
// `store`, as plan_node_full_batch measures each probe: a PeakSample of its nodes and entries
// whose peak counts the step's own bytes, not what was live before it (the stage's own model).
memory::PeakSample measure_node_full_batch(const store::NodeGraphStore& store,
                                           std::span<const std::uint32_t> nodes,
                                           const models::NodeModelConfig& model,
                                           const PeakProbeOptions& options);

// One line for a run's log: the prediction, what it rests on, and the budget it is held to.
std::string describe_node_plan(const NodeFullBatchPlan& plan, std::int64_t budget_bytes);

// ---- Sampled steps (train/step/node_subgraph_batch.hpp), when the full batch does not fit ----

// Shares of the graph's nodes the sampled probes' parts take.
inline constexpr double kSampledProbeFractions[] = {0.05, 0.1, 0.2};
// The most parts an epoch is cut into: beyond it a part is too small to learn from.
inline constexpr std::int64_t kMaxSampledParts = 256;

struct NodeSampledPlan {
  // Probed parts (nodes, entries = the subgraph's), then each check of a chosen part size.
  std::vector<memory::PeakSample> samples;
  // Nodes of each probe or check the enforced memory budget refused, in order: not measured.
  std::vector<std::int64_t> refused_parts;
  memory::PeakFit fit;     // over the probes (not the checks); unset when fewer than 2 fit
  double margin = 0;       // share of the budget held back: the fit's largest error, at least 5%
  std::int64_t parts = 0;  // steps per epoch; 0 when no part size fits
  std::int64_t nodes_per_part = 0;
  double expected_entries = 0;  // of a random part of nodes_per_part nodes
  double predicted_bytes = 0;   // the fit's, for such a part
  double measured_bytes = 0;    // the check's, on one such part
  // The smallest part the plan may take (nodes_per_part at kMaxSampledParts) and its prediction:
  // what the model's own state costs with the least that can be sampled.
  double floor_bytes = 0;

  bool fits() const { return parts > 0; }
};

// The measured peak of one sampled step (the whole graph's model `model`, Adam over all of its
// weights, the loss over the training nodes of the subgraph induced by `nodes`, ascending), its
// own bytes as measure_node_full_batch counts them. The subgraph's host arrays are not tensor
// memory on the CPU (on a device they are, and are counted).
memory::PeakSample measure_node_sampled_step(const store::NodeGraphStore& store,
                                             std::span<const std::uint32_t> nodes,
                                             const models::NodeModelConfig& model,
                                             const PeakProbeOptions& options);

// Probes sampled steps on random parts of `fractions` (ascending) of the nodes, fits {1, nodes,
// entries}, and picks the fewest parts per epoch (at most kMaxSampledParts) whose predicted peak
// is within the budget less the margin; then measures a step on one part of that size and takes
// more parts while the measurement is over it. Under an enforced memory budget a refused probe
// ends the ascending shares (halved shares are probed when fewer than two fit) and a refused check
// takes twice the parts: every sample is measured within the budget, and with fewer than two
// samples nothing fits (parts = 0). `model.num_nodes` is the store's. Throws
// std::invalid_argument for a graph without training nodes.
NodeSampledPlan plan_node_sampled(const store::NodeGraphStore& store,
                                  const models::NodeModelConfig& model,
                                  const PeakProbeOptions& options, std::uint64_t seed,
                                  std::int64_t budget_bytes,
                                  std::span<const double> fractions = kSampledProbeFractions);

// One line for a run's log: the parts, their predicted and measured peak, the budget.
std::string describe_sampled_plan(const NodeSampledPlan& plan, std::int64_t budget_bytes);

}  // namespace headroom::train
