// Inference batches planned inside a memory budget (train/batches/inference_batching.hpp): a
// scoring pass whose fixed batches the budget refuses runs, once planned, without a refused
// allocation, within the budget, and scores every graph as the unbudgeted pass does.
//
// Mutation seen to fail here: InferenceBatching::cut ignoring its cost (fixed chunks, which the
// budget refuses). Leaving the CPU queue's inputs out of the cost does not fail it: this VGAE's
// activations dwarf its inputs, and the 10% the planner leaves covers the queue.
#include "headroom/train/batches/inference_batching.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/train/stages/graph_scores.hpp"
#include "test_support.hpp"
#include "untrained_vgae.hpp"

namespace headroom::train {
namespace {

std::vector<std::uint32_t> validation_and_test_ids(const store::GraphStore& store) {
  std::vector<std::uint32_t> ids(store.validation_ids().begin(), store.validation_ids().end());
  ids.insert(ids.end(), store.test_ids().begin(), store.test_ids().end());
  return ids;
}

// Sets a CPU tensor budget for the scope and restores the unlimited default.
class ScopedCpuBudget {
 public:
  explicit ScopedCpuBudget(std::int64_t bytes) { memory::set_cpu_tensor_budget(bytes); }
  ~ScopedCpuBudget() { memory::set_cpu_tensor_budget(0); }
  ScopedCpuBudget(const ScopedCpuBudget&) = delete;
  ScopedCpuBudget& operator=(const ScopedCpuBudget&) = delete;
};

TEST(InferenceBatching, APlannedPassStaysInsideABudgetItsFixedBatchesOverrun) {
  memory::install_counting_cpu_allocator();
  testing::TempDir dir;
  const auto store = store::GraphStore::open(testing::build_synthetic_store(dir.path(), 60000));
  const auto ids = validation_and_test_ids(store);
  ASSERT_GE(ids.size(), 4 * static_cast<std::size_t>(kInferenceProbeGraphs))
      << "too few graphs for a planned pass: the test would check nothing";
  const auto autoencoder = testing::untrained_student_vgae(store, 3);
  const c10::Device cpu(torch::kCPU);
  const auto everything = static_cast<std::int64_t>(ids.size());

  // Unbudgeted, in one batch: the reference scores and the one-batch pass's peak.
  memory::reset_peak();
  const auto live = memory::cpu_tensor_memory().current_bytes;
  const auto reference = anomaly_scores(autoencoder, store, ids, {.max_graphs = everything}, cpu);
  const auto one_batch_peak = memory::cpu_tensor_memory().peak_bytes;
  ASSERT_GT(one_batch_peak, live);

  // A budget a third of the way from what is live to that peak: one batch cannot fit.
  const auto budget = live + (one_batch_peak - live) / 3;
  ScopedCpuBudget scoped(budget);
  const InferenceLimits limits{.max_graphs = everything,
                               .packing_budget_bytes = 0.9 * static_cast<double>(budget)};
  const auto refused_before = memory::cpu_tensor_memory().refusals;
  InferenceBatching plan;
  memory::reset_peak();
  const auto planned =
      anomaly_scores(autoencoder, store, ids, limits, cpu, Precision::kFloat32, &plan);
  const auto planned_peak = memory::cpu_tensor_memory().peak_bytes;
  EXPECT_EQ(memory::cpu_tensor_memory().refusals, refused_before)
      << "the budget refused an allocation of the planned pass: " << plan.info.dump();
  EXPECT_LE(planned_peak, budget);
  ASSERT_TRUE(plan.cost.has_value()) << plan.info.dump();
  EXPECT_GT(plan.cut(store, ids).size(), 1U);
  ASSERT_EQ(planned.size(), reference.size());
  for (std::size_t i = 0; i < planned.size(); ++i)
    EXPECT_NEAR(planned[i], reference[i], 1e-4 * (1 + std::abs(reference[i])))
        << "graph " << ids[i];

  // The same budget with the old fixed batches: refused, then split on out-of-memory.
  const auto refused_planned = memory::cpu_tensor_memory().refusals;
  (void)anomaly_scores(autoencoder, store, ids, {.max_graphs = everything}, cpu);
  EXPECT_GT(memory::cpu_tensor_memory().refusals, refused_planned)
      << "the fixed batch fit inside the budget: the test's budget is too loose to show planning";
}

TEST(InferenceBatching, PackedCutsKeepTheOrderAndTheBudgetAndFallBackForAnOversizeGraph) {
  testing::TempDir dir;
  const auto store = store::GraphStore::open(testing::build_synthetic_store(dir.path(), 20000));
  const auto ids = validation_and_test_ids(store);
  const auto index = store.size_index();
  InferenceBatching batching;
  batching.max_graphs = 7;
  batching.cost = memory::ByteCostModel{1000, 10, 1, 0};
  double largest = 0;
  for (const auto id : ids)
    largest =
        std::max(largest, batching.cost->predict(index.num_nodes[id], index.num_edges[id], 1));
  batching.packing_budget_bytes = 3 * largest;
  const auto batches = batching.cut(store, ids);
  std::vector<std::uint32_t> joined;
  for (const auto& batch : batches) {
    ASSERT_FALSE(batch.empty());
    EXPECT_LE(batch.size(), 7U);
    std::uint64_t nodes = 0, edges = 0;
    for (const auto id : batch) {
      nodes += index.num_nodes[id];
      edges += index.num_edges[id];
    }
    EXPECT_LE(batching.cost->predict(nodes, edges, batch.size()), batching.packing_budget_bytes);
    joined.insert(joined.end(), batch.begin(), batch.end());
  }
  EXPECT_EQ(joined, ids);
  // One graph predicted over the budget: fixed chunks of max_graphs, for the OOM split to judge.
  batching.packing_budget_bytes = largest / 2;
  const auto fallback = batching.cut(store, ids);
  ASSERT_EQ(fallback.size(), (ids.size() + 6) / 7);
  EXPECT_EQ(fallback.front().size(), 7U);
}

TEST(InferenceBatching, WithoutABudgetOrWithFewGraphsNothingIsProbed) {
  testing::TempDir dir;
  const auto store = store::GraphStore::open(testing::build_synthetic_store(dir.path(), 20000));
  const auto ids = validation_and_test_ids(store);
  int forwards = 0;
  const auto count = [&](const loader::GraphBatch&) { ++forwards; };
  const c10::Device cpu(torch::kCPU);
  const auto unbudgeted = plan_inference_batching(store, ids, {.max_graphs = 64}, cpu, count);
  EXPECT_FALSE(unbudgeted.cost.has_value());
  const auto few = plan_inference_batching(
      store, std::span(ids).first(10), {.max_graphs = 64, .packing_budget_bytes = 1e9}, cpu, count);
  EXPECT_FALSE(few.cost.has_value());
  EXPECT_EQ(forwards, 0);
  EXPECT_EQ(unbudgeted.cut(store, ids).size(), (ids.size() + 63) / 64);
}

}  // namespace
}  // namespace headroom::train
