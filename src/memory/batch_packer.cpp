#include "headroom/memory/batch_packer.hpp"

#include <fmt/format.h>

#include <cmath>
#include <utility>

namespace headroom::memory {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr std::size_t kPrefetchDistance = 32;

std::string oversize_message(std::uint32_t graph_id, std::uint64_t nodes, std::uint64_t edges,
                             double predicted_bytes, double budget_bytes) {
  return fmt::format(
      "graph {} ({} nodes, {} edges) alone is predicted to need {:.0f} bytes ({:.2f} MiB), over "
      "the batch budget of {:.0f} bytes ({:.2f} MiB): no batch can hold it",
      graph_id, nodes, edges, predicted_bytes, predicted_bytes / kMiB, budget_bytes,
      budget_bytes / kMiB);
}

void validate(std::span<const std::uint32_t> num_nodes, std::span<const std::uint32_t> num_edges,
              const ByteCostModel& model, double budget_bytes) {
  if (!std::isfinite(budget_bytes) || budget_bytes <= 0.0)
    throw std::invalid_argument(fmt::format(
        "pack_by_bytes: the budget must be a positive number of bytes, got {}", budget_bytes));
  if (!std::isfinite(model.fixed_bytes) || !std::isfinite(model.bytes_per_node) ||
      !std::isfinite(model.bytes_per_edge) || !std::isfinite(model.bytes_per_graph))
    throw std::invalid_argument(fmt::format(
        "pack_by_bytes: cost model coefficients must be finite (fixed {}, per node {}, per edge "
        "{}, per graph {})",
        model.fixed_bytes, model.bytes_per_node, model.bytes_per_edge, model.bytes_per_graph));
  if (num_nodes.size() != num_edges.size())
    throw std::invalid_argument(
        fmt::format("pack_by_bytes: size index mismatch: {} node counts but {} edge counts",
                    num_nodes.size(), num_edges.size()));
}

}  // namespace

OversizeGraphError::OversizeGraphError(std::uint32_t graph_id, std::uint64_t nodes,
                                       std::uint64_t edges, double predicted_bytes,
                                       double budget_bytes)
    : std::runtime_error(oversize_message(graph_id, nodes, edges, predicted_bytes, budget_bytes)),
      graph_id_(graph_id),
      nodes_(nodes),
      edges_(edges),
      predicted_bytes_(predicted_bytes),
      budget_bytes_(budget_bytes) {}

PackedEpoch pack_by_bytes(std::span<const std::uint32_t> ordered_ids,
                          std::span<const std::uint32_t> num_nodes,
                          std::span<const std::uint32_t> num_edges, const ByteCostModel& model,
                          double budget_bytes, std::size_t max_graphs) {
  validate(num_nodes, num_edges, model, budget_bytes);
  const std::size_t cap = max_graphs == 0 ? ordered_ids.size() : max_graphs;

  // First pass: only the batch boundaries, so that each batch vector is then allocated once at its
  // exact size (growing millions of small vectors would dominate the run time).
  std::vector<std::size_t> batch_ends;
  std::vector<double> predicted;
  std::uint64_t nodes = 0;
  std::uint64_t edges = 0;
  std::size_t count = 0;
  double current = 0.0;
  for (std::size_t i = 0; i < ordered_ids.size(); ++i) {
    // A shuffled order reads the size index at random, one cache miss per array per graph, and
    // this loop body is long enough that the CPU keeps few of them in flight on its own:
    // prefetching a fixed distance ahead makes it several times faster on large epochs.
    if (i + kPrefetchDistance < ordered_ids.size()) {
      const std::uint32_t ahead = ordered_ids[i + kPrefetchDistance];
      if (ahead < num_nodes.size()) {
        __builtin_prefetch(num_nodes.data() + ahead);
        __builtin_prefetch(num_edges.data() + ahead);
      }
    }
    const std::uint32_t id = ordered_ids[i];
    if (id >= num_nodes.size())
      throw std::out_of_range(fmt::format(
          "pack_by_bytes: graph id {} (position {} of the epoch order) is outside the size index "
          "of {} graphs",
          id, i, num_nodes.size()));
    const std::uint64_t graph_nodes = num_nodes[id];
    const std::uint64_t graph_edges = num_edges[id];
    // Checked for every graph, not only batch openers: with a negative coefficient a graph could
    // fit inside a batch yet not alone, and whether an epoch packs must not depend on its shuffle.
    const double alone = model.predict(graph_nodes, graph_edges, 1);
    if (alone > budget_bytes)
      throw OversizeGraphError(id, graph_nodes, graph_edges, alone, budget_bytes);

    if (count > 0 && count < cap) {
      const double joined = model.predict(nodes + graph_nodes, edges + graph_edges, count + 1);
      if (joined <= budget_bytes) {
        nodes += graph_nodes;
        edges += graph_edges;
        ++count;
        current = joined;
        continue;
      }
    }
    if (count > 0) {
      batch_ends.push_back(i);
      predicted.push_back(current);
    }
    nodes = graph_nodes;
    edges = graph_edges;
    count = 1;
    current = alone;
  }
  if (count > 0) {
    batch_ends.push_back(ordered_ids.size());
    predicted.push_back(current);
  }

  PackedEpoch epoch;
  epoch.batches.reserve(batch_ends.size());
  std::size_t begin = 0;
  for (const std::size_t end : batch_ends) {
    const auto slice = ordered_ids.subspan(begin, end - begin);
    epoch.batches.emplace_back(slice.begin(), slice.end());
    begin = end;
  }
  epoch.predicted_bytes = std::move(predicted);
  return epoch;
}

}  // namespace headroom::memory
