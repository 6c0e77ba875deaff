// The host plan: which items count, the CPU tensor budget the host budget leaves, the prefetch
// depth lowered to fit (CPU: in the tensor budget's free share; CUDA: pinned, in the host budget),
// and the failure message when nothing reducible is left.
#include "headroom/memory/host_memory_plan.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace headroom::memory {
namespace {

constexpr double kMiB = 1 << 20;

HostPlanInputs cpu_inputs() {
  HostPlanInputs in;
  in.budget_bytes = 1000 * kMiB;
  in.budget_source = "95% of the cgroup v1 memory.limit_in_bytes (/x) limit";
  in.baseline_bytes = 200 * kMiB;
  in.cpu_device = true;
  in.train_batch_bytes = 10 * kMiB;
  in.eval_batch_bytes = 5 * kMiB;
  in.store_bytes = 300 * kMiB;
  return in;
}

const HostPlanItem& item(const HostMemoryPlan& plan, const std::string& prefix) {
  for (const auto& i : plan.items)
    if (i.name.rfind(prefix, 0) == 0) return i;
  throw std::runtime_error("no plan item " + prefix);
}

TEST(CollatedBatchBytes, FollowsTheBatchLayout) {
  // 10 nodes x (3 float32 features + int64 membership) + 20 edges x 2 int64 + 2 graphs x 2 int64.
  EXPECT_DOUBLE_EQ(collated_batch_bytes(10, 20, 2, 3), 10 * 20 + 20 * 16 + 2 * 16);
  EXPECT_DOUBLE_EQ(collated_batch_bytes(10, 20, 2, 3, 4), 10 * 20 + 20 * 32 + 2 * 16);
}

TEST(HostMemoryPlan, CpuTensorBudgetIsWhatTheHostBudgetLeaves) {
  const auto plan = plan_host_memory(cpu_inputs());
  EXPECT_TRUE(plan.fits);
  // The budget less the baseline and the reserve outside tensors (5% of 1000 MiB, at least 64).
  EXPECT_DOUBLE_EQ(plan.cpu_tensor_budget, 736 * kMiB);
  EXPECT_DOUBLE_EQ(item(plan, "reserve outside tensors").bytes, 64 * kMiB);
  EXPECT_DOUBLE_EQ(plan.required_bytes, 1000 * kMiB);
  EXPECT_EQ(plan.prefetch_depth, 4);  // 5 x 10 MiB fit in the 73.6 MiB left free
  ASSERT_EQ(plan.adaptations.size(), 1U);
  EXPECT_NE(plan.adaptations[0].find("CPU tensor budget 736.0 MiB"), std::string::npos);
  EXPECT_FALSE(item(plan, "prefetch queue").counted);
  EXPECT_DOUBLE_EQ(item(plan, "prefetch queue").bytes, 50 * kMiB);
  EXPECT_FALSE(item(plan, "store arrays").counted);
  EXPECT_DOUBLE_EQ(item(plan, "store arrays").bytes, 300 * kMiB);
}

TEST(HostMemoryPlan, CpuPrefetchDepthIsLoweredIntoTheTensorBudgetsFreeShare) {
  auto in = cpu_inputs();
  in.train_batch_bytes = 30 * kMiB;  // depth 4 queues 150 MiB; 73.6 MiB are free: depth 1 (60)
  const auto plan = plan_host_memory(in);
  EXPECT_TRUE(plan.fits);
  EXPECT_EQ(plan.prefetch_depth, 1);
  ASSERT_EQ(plan.adaptations.size(), 2U);
  EXPECT_EQ(plan.adaptations[1].rfind("prefetch depth 4 -> 1", 0), 0U) << plan.adaptations[1];
}

TEST(HostMemoryPlan, ExplicitCpuTensorBudgetOverTheHostBudgetFailsNamingItems) {
  auto in = cpu_inputs();
  in.cpu_tensor_budget = 900 * kMiB;
  const auto plan = plan_host_memory(in);
  EXPECT_FALSE(plan.fits);
  EXPECT_DOUBLE_EQ(plan.required_bytes, 1100 * kMiB);
  const auto message = host_plan_failure(plan);
  EXPECT_NE(message.find("needs 1.07 GiB"), std::string::npos) << message;
  EXPECT_NE(message.find("baseline 200.0 MiB"), std::string::npos) << message;
  EXPECT_NE(message.find("CPU tensors 900.0 MiB"), std::string::npos) << message;
  EXPECT_NE(message.find("host budget is 1000.0 MiB (95% of the cgroup v1"), std::string::npos)
      << message;
}

TEST(HostMemoryPlan, CpuBaselineAboveTheBudgetLeavesNoTensorBudget) {
  auto in = cpu_inputs();
  in.baseline_bytes = 1200 * kMiB;
  EXPECT_FALSE(plan_host_memory(in).fits);
}

TEST(HostMemoryPlan, CudaCountsPinnedQueuesAndLowersTheDepthToFit) {
  auto in = cpu_inputs();
  in.cpu_device = false;
  in.eval_batch_bytes = 50 * kMiB;    // 5 x 50 = 250 MiB pinned
  in.train_batch_bytes = 150 * kMiB;  // depth 4: 750 (1200 total); 3: 600 (1050); 2: 450 (900)
  const auto plan = plan_host_memory(in);
  EXPECT_TRUE(plan.fits);
  EXPECT_EQ(plan.prefetch_depth, 2);
  EXPECT_DOUBLE_EQ(plan.required_bytes, 900 * kMiB);
  EXPECT_TRUE(item(plan, "prefetch queue").counted);
  EXPECT_DOUBLE_EQ(plan.cpu_tensor_budget, 0);
  ASSERT_EQ(plan.adaptations.size(), 1U);
  EXPECT_EQ(plan.adaptations[0].rfind("prefetch depth 4 -> 2", 0), 0U);
}

TEST(HostMemoryPlan, CudaThatDoesNotFitAtDepthOneFails) {
  auto in = cpu_inputs();
  in.cpu_device = false;
  in.baseline_bytes = 900 * kMiB;
  in.teacher_pinned_bytes = 100 * kMiB;
  const auto plan = plan_host_memory(in);
  EXPECT_FALSE(plan.fits);
  EXPECT_EQ(plan.prefetch_depth, 1);
  EXPECT_NE(host_plan_failure(plan).find("teacher weights 100.0 MiB"), std::string::npos);
}

TEST(HostMemoryPlan, RendersEveryItemAndJsonHoldsThem) {
  const auto plan = plan_host_memory(cpu_inputs());
  const auto text = render_host_memory_plan(plan);
  for (const auto* expected : {"host memory: budget 1000.0 MiB", "baseline", "CPU tensors",
                               "prefetch queue (4 + 1 batches)", "store arrays", "total",
                               "100.0% of the host budget", "adapted: CPU tensor budget"})
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
  const nlohmann::json json = plan;
  EXPECT_EQ(json["items"].size(), plan.items.size());
  EXPECT_EQ(json["prefetch_depth"], 4);
  EXPECT_EQ(json["fits"], true);
}

}  // namespace
}  // namespace headroom::memory
