// Planning one big graph's full-batch step: the induced subgraphs the probes train on, and the
// prediction for the whole graph against its measured step (what the stage does with it at
// different budgets: node_sampled_training_test.cpp).
#include "headroom/train/step/node_step_probe.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "headroom/store/node_subgraph.hpp"
#include "headroom/train/stages/node_classifier_stage.hpp"
#include "separable_corpus.hpp"
#include "test_support.hpp"

namespace headroom::train {
namespace {

// The store's entries as (row, column) -> weight.
std::map<std::pair<std::uint32_t, std::uint32_t>, float> entries_of(
    const store::NodeGraphStore& store) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, float> entries;
  for (std::uint32_t row = 0; row < store.num_nodes(); ++row) {
    for (auto e = store.row_offsets()[row]; e < store.row_offsets()[row + 1]; ++e)
      entries[{row, static_cast<std::uint32_t>(store.column_index()[e])}] = store.edge_weight()[e];
  }
  return entries;
}

TEST(InducedSubgraph, KeepsExactlyTheEntriesBetweenChosenNodesRenumbered) {
  testing::TempDir dir;
  const auto store = store::NodeGraphStore::open(testing::build_separable_store(dir.path(), 3, 20));
  std::vector<std::uint32_t> chosen;
  for (std::uint32_t node = 1; node < store.num_nodes(); node += 3) chosen.push_back(node);
  const auto sub = store::induced_subgraph(store, chosen);

  const auto all = entries_of(store);
  std::size_t expected = 0;
  for (const auto& [key, weight] : all) {
    expected += (key.first % 3 == 1 && key.second % 3 == 1) ? 1 : 0;
  }
  ASSERT_GT(expected, 0U);
  ASSERT_EQ(sub.num_entries(), static_cast<std::int64_t>(expected));
  ASSERT_EQ(sub.num_nodes(), static_cast<std::int64_t>(chosen.size()));
  for (std::size_t row = 0; row < chosen.size(); ++row) {
    EXPECT_EQ(sub.labels[row], store.node_label()[chosen[row]]);
    EXPECT_EQ(sub.splits[row], store.node_split()[chosen[row]]);
    for (auto e = sub.row_offsets[row]; e < sub.row_offsets[row + 1]; ++e) {
      const auto column = static_cast<std::size_t>(sub.columns[static_cast<std::size_t>(e)]);
      if (e > sub.row_offsets[row]) {
        EXPECT_LT(sub.columns[static_cast<std::size_t>(e) - 1],
                  sub.columns[static_cast<std::size_t>(e)]);
      }
      EXPECT_EQ(sub.weights[static_cast<std::size_t>(e)], all.at({chosen[row], chosen[column]}));
    }
  }
  const std::vector<std::uint32_t> descending = {5, 2};
  EXPECT_THROW(store::induced_subgraph(store, descending), std::invalid_argument);
}

TEST(NodeFullBatchPlan, PredictsTheWholeGraphsMeasuredStep) {
  testing::TempDir dir;
  const auto store =
      store::NodeGraphStore::open(testing::build_separable_store(dir.path(), 6, 150));
  const models::NodeModelConfig model{.num_nodes = 0, .hidden = 64, .num_classes = 6};
  PeakProbeOptions options;
  options.gradient_clip = 0;
  const auto plan = plan_node_full_batch(store, model, options, 1);
  ASSERT_EQ(plan.samples.size(), std::size(kNodeProbeFractions));
  EXPECT_EQ(plan.nodes, static_cast<std::int64_t>(store.num_nodes()));

  std::vector<std::uint32_t> every(store.num_nodes());
  std::iota(every.begin(), every.end(), 0U);
  const auto measured = measure_node_full_batch(store, every, model, options);
  // The probes saw at most 30% of the nodes and 9% of the entries.
  EXPECT_NEAR(plan.predicted_bytes, measured.peak_bytes, 0.1 * measured.peak_bytes)
      << describe_node_plan(plan, 0);
  EXPECT_NE(describe_node_plan(plan, 1 << 30).find("it fits"), std::string::npos);
  EXPECT_NE(describe_node_plan(plan, 1 << 10).find("it does not fit"), std::string::npos);
}

// The GAT's step grows with the entries too (its attention graph and attention values are tensor
// bytes, unlike the GCN's mapped adjacency on the CPU): the fit must carry them to the whole graph.
TEST(NodeFullBatchPlan, PredictsAGatsMeasuredStepWhoseEntriesCostBytes) {
  testing::TempDir dir;
  const auto store =
      store::NodeGraphStore::open(testing::build_separable_store(dir.path(), 6, 150));
  const models::NodeModelConfig model{
      .num_nodes = 0, .hidden = 8, .num_classes = 6, .architecture = "gat", .heads = 8};
  PeakProbeOptions options;
  options.gradient_clip = 0;
  const auto plan = plan_node_full_batch(store, model, options, 1);
  EXPECT_GT(plan.fit.bytes_per_edge, 8.0) << describe_node_plan(plan, 0);

  std::vector<std::uint32_t> every(store.num_nodes());
  std::iota(every.begin(), every.end(), 0U);
  const auto measured = measure_node_full_batch(store, every, model, options);
  EXPECT_NEAR(plan.predicted_bytes, measured.peak_bytes, 0.1 * measured.peak_bytes)
      << describe_node_plan(plan, 0);
}

}  // namespace
}  // namespace headroom::train
