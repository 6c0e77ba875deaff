#include "headroom/memory/peak_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

namespace headroom::memory {
namespace {

struct Truth {
  double a, b, c, d;
  double at(std::uint64_t n, std::uint64_t e, std::uint64_t g) const {
    return a + b * static_cast<double>(n) + c * static_cast<double>(e) + d * static_cast<double>(g);
  }
};

// Node, edge and graph counts that vary independently of each other.
std::vector<PeakSample> independent_samples(const Truth& truth) {
  const std::uint64_t shapes[][3] = {{1000, 4000, 10},    {5000, 9000, 80},   {12000, 60000, 40},
                                     {30000, 50000, 300}, {8000, 70000, 500}, {20000, 20000, 150},
                                     {45000, 150000, 90}};
  std::vector<PeakSample> samples;
  for (const auto& s : shapes) samples.push_back({s[0], s[1], s[2], truth.at(s[0], s[1], s[2])});
  return samples;
}

TEST(PeakModel, RecoversExactCoefficientsFromNoiselessSamples) {
  const Truth truth{3.5e6, 412.0, 96.0, 2048.0};
  const auto fit = fit_peak(independent_samples(truth));
  EXPECT_NEAR(fit.fixed_bytes, truth.a, truth.a * 1e-6);
  EXPECT_NEAR(fit.bytes_per_node, truth.b, truth.b * 1e-6);
  EXPECT_NEAR(fit.bytes_per_edge, truth.c, truth.c * 1e-6);
  EXPECT_NEAR(fit.bytes_per_graph, truth.d, truth.d * 1e-6);
  EXPECT_LT(fit.max_relative_error, 1e-9);
  EXPECT_EQ(fit.samples, 7u);
  // A point none of the samples had.
  EXPECT_NEAR(fit.predict(70000, 3000, 7), truth.at(70000, 3000, 7),
              truth.at(70000, 3000, 7) * 1e-6);
}

TEST(PeakModel, NoisySamplesGiveTheLeastSquaresFit) {
  const Truth truth{2e7, 300.0, 120.0, 5000.0};
  auto samples = independent_samples(truth);
  // +-2% deterministic noise, alternating in sign and size.
  const double noise[] = {0.02, -0.015, 0.01, -0.02, 0.005, -0.01, 0.015};
  for (std::size_t i = 0; i < samples.size(); ++i) samples[i].peak_bytes *= 1.0 + noise[i];
  const auto fit = fit_peak(samples);

  // Least squares: the residual is orthogonal to every column of the design matrix.
  double residual_dot[4] = {0, 0, 0, 0};
  double column_norm[4] = {0, 0, 0, 0};
  double residual_norm = 0;
  double max_relative = 0;
  for (const auto& s : samples) {
    const double r = s.peak_bytes - fit.predict(s.nodes, s.edges, s.graphs);
    const double x[4] = {1.0, static_cast<double>(s.nodes), static_cast<double>(s.edges),
                         static_cast<double>(s.graphs)};
    for (int j = 0; j < 4; ++j) {
      residual_dot[j] += r * x[j];
      column_norm[j] += x[j] * x[j];
    }
    residual_norm += r * r;
    max_relative = std::max(max_relative, std::abs(r) / s.peak_bytes);
  }
  for (int j = 0; j < 4; ++j)
    EXPECT_LT(std::abs(residual_dot[j]), 1e-8 * std::sqrt(column_norm[j] * residual_norm))
        << "column " << j;
  EXPECT_DOUBLE_EQ(fit.max_relative_error, max_relative);
  EXPECT_GT(fit.max_relative_error, 0.0);
  // No worse in squared error than the coefficients that generated the samples.
  double truth_norm = 0;
  for (const auto& s : samples) {
    const double r = s.peak_bytes - truth.at(s.nodes, s.edges, s.graphs);
    truth_norm += r * r;
  }
  EXPECT_LE(residual_norm, truth_norm * (1 + 1e-9));
  EXPECT_NEAR(fit.predict(25000, 80000, 200), truth.at(25000, 80000, 200),
              0.05 * truth.at(25000, 80000, 200));
}

TEST(PeakModel, CollinearSamplesStillGiveAFiniteFitThatPredictsThem) {
  // Every batch has 10 nodes per graph and 3 edges per node: the full system is singular.
  const Truth truth{1e6, 200.0, 40.0, 900.0};
  std::vector<PeakSample> samples;
  for (std::uint64_t graphs : {16, 32, 64, 128}) {
    const std::uint64_t nodes = graphs * 10, edges = nodes * 3;
    samples.push_back({nodes, edges, graphs, truth.at(nodes, edges, graphs)});
  }
  const auto fit = fit_peak(samples);
  for (double value :
       {fit.fixed_bytes, fit.bytes_per_node, fit.bytes_per_edge, fit.bytes_per_graph})
    EXPECT_TRUE(std::isfinite(value));
  EXPECT_LT(fit.max_relative_error, 1e-9);
  EXPECT_NEAR(fit.predict(960, 2880, 96), truth.at(960, 2880, 96), truth.at(960, 2880, 96) * 1e-9);
  // The fixed part is identifiable even here.
  EXPECT_NEAR(fit.fixed_bytes, truth.a, truth.a * 1e-6);
}

TEST(PeakModel, TermsThatOnlyFitNoiseAreLeftOut) {
  // The peak depends on nodes only; edges and graphs vary independently and the peaks carry +-1%
  // noise. Four terms would fit some of the noise with edge and graph coefficients; held-out
  // samples show that they do not generalise.
  const Truth truth{5e6, 400.0, 0.0, 0.0};
  auto samples = independent_samples(truth);
  const double noise[] = {0.01, -0.008, 0.006, -0.01, 0.004, -0.006, 0.009};
  for (std::size_t i = 0; i < samples.size(); ++i) samples[i].peak_bytes *= 1.0 + noise[i];
  const auto fit = fit_peak(samples);
  EXPECT_EQ(fit.bytes_per_edge, 0.0);
  EXPECT_EQ(fit.bytes_per_graph, 0.0);
  EXPECT_NEAR(fit.bytes_per_node, truth.b, 0.05 * truth.b);
  EXPECT_NEAR(fit.predict(60000, 1000, 1), truth.at(60000, 1000, 1),
              0.02 * truth.at(60000, 1000, 1));
}

// Probes whose peaks an unconstrained least-squares fit explains exactly with a negative per-graph
// term (the plan then printed "-96 B/graph", and the packer would predict less for more graphs).
// Every coefficient of the fit is >= 0, and it still describes the probes closely.
// (Mutation seen to fail: fit_peak without the non-negativity filter gives -300 B/graph.)
TEST(PeakModel, EveryCoefficientIsNonNegative) {
  const Truth signed_truth{1e6, 500.0, 30.0, -300.0};
  const auto samples = independent_samples(signed_truth);
  const auto fit = fit_peak(samples);
  for (const double c :
       {fit.fixed_bytes, fit.bytes_per_node, fit.bytes_per_edge, fit.bytes_per_graph})
    EXPECT_GE(c, 0.0);
  EXPECT_LT(fit.max_relative_error, 0.10);
  EXPECT_EQ(peak_fit_problem(fit, samples), "");
}

TEST(PeakModel, TwoSamplesFitALineThroughBoth) {
  const std::vector<PeakSample> samples = {{100, 300, 10, 5000.0}, {200, 600, 20, 9000.0}};
  const auto fit = fit_peak(samples);
  EXPECT_NEAR(fit.predict(100, 300, 10), 5000.0, 1e-6);
  EXPECT_NEAR(fit.predict(200, 600, 20), 9000.0, 1e-6);
  EXPECT_NEAR(fit.predict(300, 900, 30), 13000.0, 1e-6);
}

TEST(PeakModel, IdenticalSamplesFallBackToTheirMean) {
  const std::vector<PeakSample> samples = {{100, 300, 10, 5000.0}, {100, 300, 10, 7000.0}};
  const auto fit = fit_peak(samples);
  EXPECT_NEAR(fit.predict(100, 300, 10), 6000.0, 1e-6);
  EXPECT_NEAR(fit.max_relative_error, 1000.0 / 5000.0, 1e-12);
}

TEST(PeakModel, RejectsTooFewSamplesAndBadPeaks) {
  EXPECT_THROW(fit_peak({}), std::invalid_argument);
  const std::vector<PeakSample> one = {{10, 20, 1, 100.0}};
  EXPECT_THROW(fit_peak(one), std::invalid_argument);
  const std::vector<PeakSample> zero = {{10, 20, 1, 100.0}, {20, 40, 2, 0.0}};
  EXPECT_THROW(fit_peak(zero), std::invalid_argument);
  const std::vector<PeakSample> nan = {{10, 20, 1, 100.0}, {20, 40, 2, std::nan("")}};
  EXPECT_THROW(fit_peak(nan), std::invalid_argument);
}

TEST(PeakModel, CostModelPredictsLikeTheFit) {
  const auto fit = fit_peak(independent_samples({1e5, 10.0, 2.0, 30.0}));
  const auto model = fit.cost_model();
  EXPECT_DOUBLE_EQ(model.predict(1234, 5678, 9), fit.predict(1234, 5678, 9));
}

TEST(PeakModel, JsonRoundTrips) {
  PeakFit fit;
  fit.fixed_bytes = 1.5e6;
  fit.bytes_per_node = 12.25;
  fit.bytes_per_edge = 3.5;
  fit.bytes_per_graph = 77.0;
  fit.max_relative_error = 0.031;
  fit.samples = 5;
  const nlohmann::json json = fit;
  EXPECT_EQ(json.at("bytes_per_edge").get<double>(), 3.5);
  const auto back = json.get<PeakFit>();
  EXPECT_EQ(back.fixed_bytes, fit.fixed_bytes);
  EXPECT_EQ(back.bytes_per_node, fit.bytes_per_node);
  EXPECT_EQ(back.bytes_per_edge, fit.bytes_per_edge);
  EXPECT_EQ(back.bytes_per_graph, fit.bytes_per_graph);
  EXPECT_EQ(back.max_relative_error, fit.max_relative_error);
  EXPECT_EQ(back.samples, fit.samples);

  const PeakSample sample{11, 22, 3, 4096.0};
  const auto sample_back = nlohmann::json(sample).get<PeakSample>();
  EXPECT_EQ(sample_back.nodes, 11u);
  EXPECT_EQ(sample_back.edges, 22u);
  EXPECT_EQ(sample_back.graphs, 3u);
  EXPECT_EQ(sample_back.peak_bytes, 4096.0);
}

}  // namespace
}  // namespace headroom::memory
