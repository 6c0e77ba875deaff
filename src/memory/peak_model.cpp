#include "headroom/memory/peak_model.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace headroom::memory {
namespace {

constexpr std::size_t kTerms = 4;  // constant, nodes, edges, graphs
constexpr double kSingularPivot = 1e-9;

using Row = std::array<double, kTerms>;

Row design_row(const PeakSample& s) {
  return {1.0, static_cast<double>(s.nodes), static_cast<double>(s.edges),
          static_cast<double>(s.graphs)};
}

// Solves the scaled normal equations for the terms in `terms`; nullopt when they are singular.
// Returns the coefficients of all four terms (0 for the ones left out).
std::optional<Row> solve_subset(std::span<const PeakSample> samples,
                                const std::vector<std::size_t>& terms) {
  const std::size_t k = terms.size();
  if (samples.size() < k) return std::nullopt;
  // Scaling each column to unit maximum keeps the normal matrix's entries comparable; a column that
  // is all zeros cannot be determined.
  std::vector<double> scale(k, 0.0);
  for (const auto& s : samples) {
    const Row row = design_row(s);
    for (std::size_t j = 0; j < k; ++j) scale[j] = std::max(scale[j], std::abs(row[terms[j]]));
  }
  for (double value : scale)
    if (value == 0.0) return std::nullopt;

  // Augmented [A^T A | A^T y], y also scaled so the right-hand side is O(1).
  double y_scale = 0.0;
  for (const auto& s : samples) y_scale = std::max(y_scale, s.peak_bytes);
  std::vector<std::vector<double>> m(k, std::vector<double>(k + 1, 0.0));
  for (const auto& s : samples) {
    const Row row = design_row(s);
    const double y = s.peak_bytes / y_scale;
    for (std::size_t i = 0; i < k; ++i) {
      const double xi = row[terms[i]] / scale[i];
      for (std::size_t j = 0; j < k; ++j) m[i][j] += xi * row[terms[j]] / scale[j];
      m[i][k] += xi * y;
    }
  }
  double max_diagonal = 0.0;
  for (std::size_t i = 0; i < k; ++i) max_diagonal = std::max(max_diagonal, std::abs(m[i][i]));

  // Gaussian elimination with partial pivoting.
  for (std::size_t col = 0; col < k; ++col) {
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < k; ++r)
      if (std::abs(m[r][col]) > std::abs(m[pivot][col])) pivot = r;
    if (std::abs(m[pivot][col]) <= kSingularPivot * max_diagonal) return std::nullopt;
    std::swap(m[col], m[pivot]);
    for (std::size_t r = col + 1; r < k; ++r) {
      const double factor = m[r][col] / m[col][col];
      for (std::size_t c = col; c <= k; ++c) m[r][c] -= factor * m[col][c];
    }
  }
  std::vector<double> solution(k, 0.0);
  for (std::size_t i = k; i-- > 0;) {
    double sum = m[i][k];
    for (std::size_t j = i + 1; j < k; ++j) sum -= m[i][j] * solution[j];
    solution[i] = sum / m[i][i];
  }
  Row coefficients{};
  for (std::size_t j = 0; j < k; ++j) coefficients[terms[j]] = solution[j] * y_scale / scale[j];
  for (double value : coefficients)
    if (!std::isfinite(value)) return std::nullopt;
  return coefficients;
}

// Preference order of the term subsets (indices into design_row): most terms first.
const std::vector<std::vector<std::size_t>>& subsets() {
  static const std::vector<std::vector<std::size_t>> order = {
      {0, 1, 2, 3}, {0, 1, 2}, {0, 1, 3}, {0, 2, 3}, {0, 1}, {0, 2}, {0, 3}, {0}};
  return order;
}

// Root mean square of the relative errors with which each sample is predicted by the fit of the
// others: how well the subset generalises. nullopt when a sample cannot be left out (too few
// samples) or a fit without it is singular.
std::optional<double> leave_one_out_error(std::span<const PeakSample> samples,
                                          const std::vector<std::size_t>& terms) {
  if (samples.size() < terms.size() + 1) return std::nullopt;
  std::vector<PeakSample> others;
  double sum_squares = 0.0;
  for (std::size_t left_out = 0; left_out < samples.size(); ++left_out) {
    others.clear();
    for (std::size_t i = 0; i < samples.size(); ++i)
      if (i != left_out) others.push_back(samples[i]);
    const auto coefficients = solve_subset(others, terms);
    if (!coefficients) return std::nullopt;
    const Row row = design_row(samples[left_out]);
    double predicted = 0.0;
    for (std::size_t j = 0; j < kTerms; ++j) predicted += (*coefficients)[j] * row[j];
    const double relative =
        (predicted - samples[left_out].peak_bytes) / samples[left_out].peak_bytes;
    sum_squares += relative * relative;
  }
  return std::sqrt(sum_squares / static_cast<double>(samples.size()));
}

}  // namespace

double PeakFit::predict(std::uint64_t nodes, std::uint64_t edges, std::uint64_t graphs) const {
  return cost_model().predict(nodes, edges, graphs);
}

ByteCostModel PeakFit::cost_model() const {
  return ByteCostModel{fixed_bytes, bytes_per_node, bytes_per_edge, bytes_per_graph};
}

PeakFit fit_peak(std::span<const PeakSample> samples) {
  if (samples.size() < 2)
    throw std::invalid_argument("fit_peak: at least 2 samples are needed, got " +
                                std::to_string(samples.size()));
  for (const auto& s : samples)
    if (!std::isfinite(s.peak_bytes) || s.peak_bytes <= 0.0)
      throw std::invalid_argument("fit_peak: a sample's peak_bytes is not a positive number (" +
                                  std::to_string(s.peak_bytes) + ")");

  struct Candidate {
    Row coefficients;
    std::optional<double> held_out_error;
  };
  std::vector<Candidate> candidates;
  bool all_validated = true;
  for (const auto& terms : subsets()) {
    auto coefficients = solve_subset(samples, terms);
    // Bytes are never negative: a negative coefficient only trades against another term over
    // counts that grew together in the probes (-96 B/graph beside an inflated per-node term), and
    // it makes the packer predict less for a batch of more graphs. Such a subset is no candidate;
    // one with fewer terms describes the same probes without it.
    if (!coefficients ||
        std::any_of(coefficients->begin(), coefficients->end(), [](double c) { return c < 0; }))
      continue;
    auto error = leave_one_out_error(samples, terms);
    all_validated = all_validated && error.has_value();
    candidates.push_back({*coefficients, error});
  }
  // The constant-only subset is never singular (its column is all ones) and its coefficient is the
  // mean peak, positive: there is a candidate.
  std::size_t chosen = 0;
  if (all_validated)
    for (std::size_t i = 1; i < candidates.size(); ++i)
      if (*candidates[i].held_out_error < *candidates[chosen].held_out_error) chosen = i;
  const std::optional<Row> coefficients = candidates[chosen].coefficients;
  // The constant-only subset is never singular (its column is all ones), so a fit always exists.
  PeakFit fit;
  fit.fixed_bytes = (*coefficients)[0];
  fit.bytes_per_node = (*coefficients)[1];
  fit.bytes_per_edge = (*coefficients)[2];
  fit.bytes_per_graph = (*coefficients)[3];
  fit.samples = samples.size();
  for (const auto& s : samples)
    fit.max_relative_error =
        std::max(fit.max_relative_error,
                 std::abs(fit.predict(s.nodes, s.edges, s.graphs) - s.peak_bytes) / s.peak_bytes);
  return fit;
}

std::string peak_fit_problem(const PeakFit& fit, std::span<const PeakSample> samples) {
  const std::array<double, kTerms> coefficients = {fit.fixed_bytes, fit.bytes_per_node,
                                                   fit.bytes_per_edge, fit.bytes_per_graph};
  for (const double c : coefficients)
    if (!std::isfinite(c)) return "a coefficient is not a finite number";
  if (samples.size() < 2)
    return fmt::format("it holds {} probe sample(s), a fit needs 2", samples.size());
  for (const auto& s : samples)
    if (!std::isfinite(s.peak_bytes) || s.peak_bytes <= 0.0)
      return fmt::format("a probe sample's peak ({} bytes) is not a positive number", s.peak_bytes);
  const PeakFit refit = fit_peak(samples);
  const std::array<double, kTerms> expected = {refit.fixed_bytes, refit.bytes_per_node,
                                               refit.bytes_per_edge, refit.bytes_per_graph};
  // The same samples give the same coefficients; only the last digits of a JSON round trip may
  // differ (they do not, but a tolerance costs nothing).
  for (std::size_t j = 0; j < kTerms; ++j)
    if (std::abs(coefficients[j] - expected[j]) >
        1e-9 * std::max(std::abs(coefficients[j]), std::abs(expected[j])))
      return fmt::format(
          "its coefficients ({}, {}, {}, {}) are not the fit of its own probe samples ({}, {}, "
          "{}, {})",
          coefficients[0], coefficients[1], coefficients[2], coefficients[3], expected[0],
          expected[1], expected[2], expected[3]);
  for (const auto& s : samples)
    if (!(fit.predict(s.nodes, s.edges, s.graphs) > 0.0))
      return fmt::format("it predicts a peak of {} bytes for a probe batch of {} nodes",
                         fit.predict(s.nodes, s.edges, s.graphs), s.nodes);
  return {};
}

std::string fresh_sample_problem(const PeakFit& fit, const PeakSample& fresh, double tolerance) {
  const double predicted = fit.predict(fresh.nodes, fresh.edges, fresh.graphs);
  if (predicted > 0.0 && std::abs(predicted - fresh.peak_bytes) <= tolerance * fresh.peak_bytes)
    return {};
  return fmt::format(
      "it predicts {:.0f} bytes for a probe batch of {} graphs ({} nodes, {} edges), measured now "
      "at {:.0f} bytes",
      predicted, fresh.graphs, fresh.nodes, fresh.edges, fresh.peak_bytes);
}

void to_json(nlohmann::json& json, const PeakSample& s) {
  json = {
      {"nodes", s.nodes}, {"edges", s.edges}, {"graphs", s.graphs}, {"peak_bytes", s.peak_bytes}};
}

void from_json(const nlohmann::json& json, PeakSample& s) {
  s.nodes = json.at("nodes").get<std::uint64_t>();
  s.edges = json.at("edges").get<std::uint64_t>();
  s.graphs = json.at("graphs").get<std::uint64_t>();
  s.peak_bytes = json.at("peak_bytes").get<double>();
}

void to_json(nlohmann::json& json, const PeakFit& f) {
  json = {{"fixed_bytes", f.fixed_bytes},
          {"bytes_per_node", f.bytes_per_node},
          {"bytes_per_edge", f.bytes_per_edge},
          {"bytes_per_graph", f.bytes_per_graph},
          {"max_relative_error", f.max_relative_error},
          {"samples", f.samples}};
}

void from_json(const nlohmann::json& json, PeakFit& f) {
  f.fixed_bytes = json.at("fixed_bytes").get<double>();
  f.bytes_per_node = json.at("bytes_per_node").get<double>();
  f.bytes_per_edge = json.at("bytes_per_edge").get<double>();
  f.bytes_per_graph = json.at("bytes_per_graph").get<double>();
  f.max_relative_error = json.at("max_relative_error").get<double>();
  f.samples = json.at("samples").get<std::size_t>();
}

}  // namespace headroom::memory
