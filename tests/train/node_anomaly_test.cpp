// Node-level anomaly scores: the normaliser's statistics and each graph's top-k pooled score equal
// what the family's per-node evidence gives when worked out here, node by node.
#include "headroom/train/stages/node_anomaly.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <vector>

#include "headroom/loader/collate.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/step/losses.hpp"
#include "test_support.hpp"
#include "untrained_vgae.hpp"

namespace headroom::train {
namespace {

TEST(NodeAnomaly, NormalisedTopNodesEqualTheEvidenceWorkedOutNodeByNode) {
  testing::TempDir dir;
  const auto store = store::GraphStore::open(testing::build_synthetic_store(dir.path(), 20000));
  const auto autoencoder = testing::untrained_student_vgae(store, 5);
  const auto& family = *autoencoder.family;
  autoencoder.model->eval();
  const auto fit_ids = store.train_ids().first(24);
  const auto score_ids = store.test_ids().first(12);
  const c10::Device cpu(torch::kCPU);
  // Batches of 5: statistics and scores must not depend on how graphs are batched.
  const auto normaliser = fit_node_errors(autoencoder, store, fit_ids, {.max_graphs = 5}, cpu);
  const auto scores =
      top_node_anomaly_scores(autoencoder, normaliser, store, score_ids, 3, {.max_graphs = 5}, cpu);
  ASSERT_EQ(scores.size(), score_ids.size());

  torch::NoGradGuard no_grad;
  const auto node_errors = [&](std::span<const std::uint32_t> ids) {
    const auto batch = loader::collate(store, ids, {});
    const auto evidence = family.evidence(*autoencoder.model, batch);
    const auto error = (evidence.feature_error + 0.1 * evidence.identity_error).to(torch::kDouble);
    return std::tuple{error, node_id_classes(batch.x), batch.batch.to(torch::kLong)};
  };
  // The statistics of every identity class seen at least twice.
  const auto [fit_error, fit_class, fit_graph] = node_errors(fit_ids);
  std::map<std::int64_t, std::vector<double>> by_class;
  for (std::int64_t n = 0; n < fit_error.size(0); ++n)
    by_class[fit_class[n].item<std::int64_t>()].push_back(fit_error[n].item<double>());
  std::size_t checked = 0;
  for (const auto& [k, errors] : by_class) {
    if (errors.size() < 2) continue;
    double mean = 0;
    for (const double e : errors) mean += e;
    mean /= static_cast<double>(errors.size());
    double squares = 0;
    for (const double e : errors) squares += (e - mean) * (e - mean);
    const double spread = std::sqrt(squares / static_cast<double>(errors.size() - 1));
    EXPECT_NEAR(normaliser.mean.at(static_cast<std::size_t>(k)), mean, 1e-6)
        << k;  // float32 errors
    EXPECT_NEAR(normaliser.spread.at(static_cast<std::size_t>(k)), std::max(spread, 1e-6),
                1e-6 * std::max(1.0, spread))
        << k;
    ++checked;
  }
  EXPECT_GT(checked, 3U);
  // Each graph: the mean of its 3 highest z.
  const auto [error, identity, graph] = node_errors(score_ids);
  std::vector<std::vector<double>> z_of(score_ids.size());
  for (std::int64_t n = 0; n < error.size(0); ++n)
    z_of[static_cast<std::size_t>(graph[n].item<std::int64_t>())].push_back(
        normaliser.z(identity[n].item<std::int64_t>(), error[n].item<double>()));
  for (std::size_t g = 0; g < z_of.size(); ++g) {
    auto& z = z_of[g];
    std::sort(z.begin(), z.end(), std::greater<>());
    const auto k = std::min<std::size_t>(3, z.size());
    double top = 0;
    for (std::size_t i = 0; i < k; ++i) top += z[i];
    EXPECT_NEAR(scores[g], top / static_cast<double>(k), 1e-4 * std::max(1.0, std::fabs(top))) << g;
  }
  // A class never seen is read against all nodes.
  EXPECT_DOUBLE_EQ(normaliser.z(1'000'000, normaliser.overall_mean + normaliser.overall_spread),
                   1.0);
}

}  // namespace
}  // namespace headroom::train
