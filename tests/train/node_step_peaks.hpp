// The two measured peaks that bound a node stage's choice (tests of sampled training pick their
// budgets between them): the full batch over every node, and a sampled step on a part of 5% of
// the nodes — about what the model's own state and its update cost with the least sampling.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "headroom/models/node_model.hpp"
#include "headroom/store/node_graph_store.hpp"
#include "headroom/train/step/node_step_probe.hpp"

namespace headroom::testing {

struct NodeStepPeaks {
  double whole = 0;  // bytes of the full batch's step
  double floor = 0;  // bytes of the smallest sampled step

  // A budget `share` (0..1) of the way from the floor to the full batch.
  std::int64_t budget_between(double share) const {
    return static_cast<std::int64_t>(floor + share * (whole - floor));
  }
};

// Measured with the probes' options (no gradient clipping, as the node task trains).
inline NodeStepPeaks measure_node_step_peaks(const store::NodeGraphStore& store,
                                             const models::NodeModelConfig& model) {
  train::PeakProbeOptions options;
  options.gradient_clip = 0;
  std::vector<std::uint32_t> every(store.num_nodes());
  std::iota(every.begin(), every.end(), 0U);
  std::vector<std::uint32_t> part;
  const auto step = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(store.num_nodes() / 20));
  for (std::uint32_t node = 0; node < store.num_nodes(); node += step) part.push_back(node);
  return {train::measure_node_full_batch(store, every, model, options).peak_bytes,
          train::measure_node_sampled_step(store, part, model, options).peak_bytes};
}

}  // namespace headroom::testing
