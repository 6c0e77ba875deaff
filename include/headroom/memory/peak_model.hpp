// The measured-mode peak-memory model: peak bytes of one training step as a linear function of a
// batch's node, edge and graph counts, fitted by least squares to peaks measured by the probe
// (peak_probe.hpp). The fitted coefficients feed the byte-budget batch packer (batch_packer.hpp).
//
// Pure functions of their arguments; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "headroom/memory/batch_packer.hpp"

namespace headroom::memory {

// One measured training step.
struct PeakSample {
  std::uint64_t nodes = 0;   // total nodes of the batch
  std::uint64_t edges = 0;   // total edges of the batch
  std::uint64_t graphs = 0;  // graphs in the batch
  double peak_bytes = 0.0;   // peak tensor bytes of the step (parameters and optimizer included)
};

// peak ~= fixed_bytes + bytes_per_node*nodes + bytes_per_edge*edges + bytes_per_graph*graphs.
// A coefficient that the samples could not determine (see fit_peak) is 0.
struct PeakFit {
  double fixed_bytes = 0.0;
  double bytes_per_node = 0.0;
  double bytes_per_edge = 0.0;
  double bytes_per_graph = 0.0;
  double max_relative_error = 0.0;  // max over the samples of |predicted - measured| / measured
  std::size_t samples = 0;

  double predict(std::uint64_t nodes, std::uint64_t edges, std::uint64_t graphs) const;
  ByteCostModel cost_model() const;
};

// Least squares over the samples, on a subset of the terms {1, nodes, edges, graphs}. Every
// subset whose normal equations are well-conditioned is a candidate; when there are enough
// samples to validate all of them, the one with the smallest leave-one-out error (the RMS relative
// error of predicting each sample from the others) is used, so that four coefficients are not
// fitted to noise or to nearly proportional columns (samples drawn from one store often keep
// nodes, edges and graphs nearly proportional). With too few samples to validate, the candidate
// with the most terms is used (order: {1,n,e,g}, three-term, two-term, constant; node and edge
// terms before the graph term). Columns are scaled to unit maximum before solving (bytes and
// counts span many orders of magnitude); a pivot below 1e-9 of the largest diagonal entry of the
// scaled normal matrix counts as singular. A subset whose solution has a negative coefficient is
// no candidate (bytes are never negative; such a coefficient only trades against a correlated
// term, and a packer reading it would predict less for more graphs): every coefficient is >= 0.
//
// Throws std::invalid_argument for fewer than 2 samples, or a peak that is not finite and positive.
PeakFit fit_peak(std::span<const PeakSample> samples);

// Why `fit` cannot be trusted as the fit of `samples` (both read back from a file, say), or an
// empty string when it can: the coefficients are finite, there are at least 2 samples with finite
// positive peaks, the coefficients are those fit_peak gives for the samples (it is deterministic),
// and the fit predicts a positive peak for each sample. A one-line reason.
std::string peak_fit_problem(const PeakFit& fit, std::span<const PeakSample> samples);

// Why `fit` does not describe `fresh`, a step measured now, or an empty string when it does: its
// prediction for the batch is positive and within `tolerance` (relative) of the measured peak.
std::string fresh_sample_problem(const PeakFit& fit, const PeakSample& fresh, double tolerance);

void to_json(nlohmann::json& json, const PeakSample& sample);
void from_json(const nlohmann::json& json, PeakSample& sample);
void to_json(nlohmann::json& json, const PeakFit& fit);
void from_json(const nlohmann::json& json, PeakFit& fit);

}  // namespace headroom::memory
