// Probes run real training steps on a small synthetic store; each test compares measured peaks
// against each other or against the fit, never against fixed byte counts (they depend on the
// LibTorch build).
#include "headroom/memory/peak_probe.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <variant>
#include <vector>

#include "headroom/loader/epoch_order.hpp"
#include "headroom/memory/peak_model.hpp"
#include "headroom/models/vgae.hpp"
#include "headroom/train/families/plain_probe.hpp"
#include "test_support.hpp"

namespace headroom::memory {
using train::probe_training_peak;
using train::probe_training_peaks;
namespace {

class PeakProbe : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<testing::TempDir>();
    store_.emplace(store::GraphStore::open(testing::build_synthetic_store(dir_->path(), 30000)));
  }
  static void TearDownTestSuite() {
    store_.reset();
    dir_.reset();
  }
  static const store::GraphStore& store() { return *store_; }

  // Four probe sizes scaled to the training split (the largest is half of it, so twice the largest
  // still fits), and an unseen size between the two largest.
  static std::vector<std::int64_t> probe_sizes() {
    const auto n = static_cast<std::int64_t>(store().train_ids().size());
    return {n / 16, n / 8, n / 4, n / 2};
  }
  static std::int64_t unseen_size() {
    return static_cast<std::int64_t>(store().train_ids().size()) * 3 / 8;
  }

  static void expect_growing_and_predictable(const train::ModelSpec& model) {
    const auto sizes = probe_sizes();
    ASSERT_GE(sizes.front(), 4) << "the synthetic store is too small";
    const auto samples = probe_training_peaks(store(), model, sizes);
    ASSERT_EQ(samples.size(), sizes.size());
    for (std::size_t i = 1; i < samples.size(); ++i)
      EXPECT_GT(samples[i].peak_bytes, samples[i - 1].peak_bytes) << "batch size " << sizes[i];
    const auto fit = fit_peak(samples);

    // One size between the probes and one twice the largest (the packer's budgets extrapolate).
    const std::int64_t unseen[] = {unseen_size(), 2 * sizes.back()};
    const auto held_out = probe_training_peaks(store(), model, unseen);
    for (std::size_t i = 0; i < held_out.size(); ++i) {
      const auto& s = held_out[i];
      const double predicted = fit.predict(s.nodes, s.edges, s.graphs);
      const double error = std::abs(predicted - s.peak_bytes) / s.peak_bytes;
      std::printf(
          "    fit: fixed %.0f B, %.1f B/node, %.1f B/edge, %.1f B/graph; unseen batch of "
          "%lld: measured %.0f B, predicted %.0f B, relative error %.2e\n",
          fit.fixed_bytes, fit.bytes_per_node, fit.bytes_per_edge, fit.bytes_per_graph,
          static_cast<long long>(unseen[i]), s.peak_bytes, predicted, error);
      EXPECT_LT(error, 0.15) << "batch size " << unseen[i];
    }
  }

 private:
  static inline std::unique_ptr<testing::TempDir> dir_;
  static inline std::optional<store::GraphStore> store_;
};

TEST_F(PeakProbe, SamplesDescribeTheFirstTrainingIdsInShuffledOrder) {
  const auto order = loader::shuffled(store().train_ids(), 0, 0);
  const auto sizes = store().size_index();
  const std::int64_t batch_sizes[] = {3, 7};
  const auto samples = probe_training_peaks(
      store(), train::preset_model(store(), "gat", models::ModelSize::kStudent), batch_sizes);
  ASSERT_EQ(samples.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    std::uint64_t nodes = 0, edges = 0;
    for (std::int64_t k = 0; k < batch_sizes[i]; ++k) {
      nodes += sizes.num_nodes[order[static_cast<std::size_t>(k)]];
      edges += sizes.num_edges[order[static_cast<std::size_t>(k)]];
    }
    EXPECT_EQ(samples[i].graphs, static_cast<std::uint64_t>(batch_sizes[i]));
    EXPECT_EQ(samples[i].nodes, nodes);
    EXPECT_EQ(samples[i].edges, edges);
    EXPECT_GT(samples[i].peak_bytes, 0.0);
  }
}

TEST_F(PeakProbe, PeakIncludesTheModelAndOptimizerState) {
  const auto model = train::preset_model(store(), "vgae", models::ModelSize::kStudent);
  const std::int64_t one[] = {1};
  const auto sample = probe_training_peaks(store(), model, one).front();
  // Parameters, their gradients and Adam's two moments: at least four float copies.
  std::int64_t parameter_bytes = 0;
  {
    torch::NoGradGuard no_grad;
    models::VGAE reference(model.config.get<models::VgaeConfig>());
    for (const auto& p : reference->parameters()) parameter_bytes += p.numel() * 4;
  }
  EXPECT_GE(sample.peak_bytes, 4.0 * static_cast<double>(parameter_bytes));
}

TEST_F(PeakProbe, GatStudentPeaksGrowAndTheFitPredictsAnUnseenBatch) {
  expect_growing_and_predictable(train::preset_model(store(), "gat", models::ModelSize::kStudent));
}

TEST_F(PeakProbe, VgaeStudentPeaksGrowAndTheFitPredictsAnUnseenBatch) {
  expect_growing_and_predictable(train::preset_model(store(), "vgae", models::ModelSize::kStudent));
}

TEST_F(PeakProbe, GradientCheckpointingLowersTheGatPeak) {
  auto config = train::preset_model(store(), "gat", models::ModelSize::kStudent);
  const std::int64_t largest[] = {probe_sizes().back()};
  config.config["gradient_checkpointing"] = true;
  const auto on = probe_training_peaks(store(), config, largest).front();
  config.config["gradient_checkpointing"] = false;
  const auto off = probe_training_peaks(store(), config, largest).front();
  std::printf("    checkpointing on %.0f B, off %.0f B\n", on.peak_bytes, off.peak_bytes);
  EXPECT_EQ(on.nodes, off.nodes);
  EXPECT_LT(on.peak_bytes, off.peak_bytes);
}

TEST_F(PeakProbe, ProbeBatchesSpanSizeClassesWithinTheCap) {
  const auto index = store().size_index();
  const auto train = store().train_ids();
  const std::set<std::uint32_t> train_set(train.begin(), train.end());
  const std::int64_t cap = static_cast<std::int64_t>(train.size()) / 3;
  const auto batches = probe_batches(store(), cap);
  ASSERT_GE(batches.size(), 2u);
  const auto mean_nodes = [&](const std::vector<std::uint32_t>& ids) {
    double sum = 0;
    for (const auto id : ids) sum += index.num_nodes[id];
    return sum / static_cast<double>(ids.size());
  };
  for (const auto& batch : batches) {
    EXPECT_FALSE(batch.empty());
    EXPECT_LE(static_cast<std::int64_t>(batch.size()), cap);
    const std::set<std::uint32_t> unique(batch.begin(), batch.end());
    EXPECT_EQ(unique.size(), batch.size()) << "a graph twice in one probe batch";
    for (const auto id : batch) EXPECT_TRUE(train_set.count(id)) << id << " is not a training id";
  }
  // The first batch holds the smallest graphs and another one the largest: their node counts
  // differ, so the fit sees batches of different composition. (Windows that coincide on a small
  // store are kept once, so which batch holds the largest depends on the store's size.)
  std::uint32_t smallest = index.num_nodes[train[0]];
  std::uint32_t largest = smallest;
  for (const auto id : train) {
    smallest = std::min(smallest, index.num_nodes[id]);
    largest = std::max(largest, index.num_nodes[id]);
  }
  EXPECT_EQ(index.num_nodes[batches[0].front()], smallest);
  double largest_mean = 0;
  bool has_largest = false;
  for (const auto& batch : batches) {
    largest_mean = std::max(largest_mean, mean_nodes(batch));
    for (const auto id : batch) has_largest = has_largest || index.num_nodes[id] == largest;
  }
  EXPECT_TRUE(has_largest);
  EXPECT_LT(mean_nodes(batches[0]), largest_mean);
  EXPECT_THROW(probe_batches(store(), 0), std::invalid_argument);
  EXPECT_EQ(probe_batches(store(), 1).front().size(), 1u);
}

TEST_F(PeakProbe, TheFitOfTheProbeBatchesPredictsAShuffledBatch) {
  const auto model = train::preset_model(store(), "gat", models::ModelSize::kStudent);
  std::vector<PeakSample> samples;
  const auto cap = static_cast<std::int64_t>(store().train_ids().size()) / 4;
  for (const auto& batch : probe_batches(store(), cap))
    samples.push_back(probe_training_peak(store(), model, batch));
  const auto fit = fit_peak(samples);
  // A batch of another composition and a larger size than any probe.
  const auto order = loader::shuffled(store().train_ids(), 7, 3);
  const auto unseen = std::span(order).first(static_cast<std::size_t>(cap) * 2);
  const auto measured = probe_training_peak(store(), model, unseen);
  const double predicted = fit.predict(measured.nodes, measured.edges, measured.graphs);
  std::printf(
      "    %zu probes, fit error %.3f%%; unseen %llu graphs: measured %.0f B, predicted %.0f B\n",
      samples.size(), 100.0 * fit.max_relative_error,
      static_cast<unsigned long long>(measured.graphs), measured.peak_bytes, predicted);
  EXPECT_LT(std::abs(predicted - measured.peak_bytes) / measured.peak_bytes, 0.10);
}

TEST_F(PeakProbe, RejectsBatchSizesOutsideTheTrainingSplit) {
  const auto model = train::preset_model(store(), "gat", models::ModelSize::kStudent);
  const std::int64_t zero[] = {0};
  EXPECT_THROW(probe_training_peaks(store(), model, zero), std::invalid_argument);
  const std::int64_t too_many[] = {static_cast<std::int64_t>(store().train_ids().size()) + 1};
  EXPECT_THROW(probe_training_peaks(store(), model, too_many), std::invalid_argument);
}

}  // namespace
}  // namespace headroom::memory
