// With a memory budget, a stage measures its step's peak on probe batches, packs every epoch by
// predicted bytes, and then trains inside the budget without needing the OOM guard.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "headroom/memory/system_memory.hpp"
#include "headroom/store/graph_store.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

TEST(BatchSizing, BudgetedRunIsPackedByPredictedBytesAndStaysInside) {
  testing::TempDir dir;
  const auto store = testing::build_synthetic_store(dir.path(), 40000);
  const std::int64_t budget = 120'000'000;
  std::string output;
  const auto command = std::string(HEADROOM_BINARY) + " normal --preset gat,teacher --store " +
                       store.string() + " --runs-dir " + (dir / "runs").string() +
                       " --max-epochs 2 --batch-size 100000 --threads 2 --progress false"
                       " --memory-budget " +
                       std::to_string(budget) + " 2>&1";
  ASSERT_EQ(testing::run_command(command, &output), 0) << output;
  EXPECT_NE(output.find("memory plan: peak ="), std::string::npos) << output;
  const auto metrics_file = dir / "runs" / "store" / "teacher_normal" / "metrics.jsonl";
  int epochs = 0;
  const auto train_graphs = store::GraphStore::open(store).train_ids().size();
  for (const auto& metrics : testing::read_metrics(metrics_file, "epoch")) {
    ++epochs;
    EXPECT_LE(metrics["memory"]["cpu"]["peak_bytes"].get<std::int64_t>(), budget);
    // The budget, not the (huge) graph cap, cut the epoch into several batches.
    EXPECT_GT(metrics["steps"].get<std::int64_t>(), 1);
    EXPECT_EQ(metrics["graphs"].get<std::size_t>(), train_graphs);  // every graph, once
    EXPECT_EQ(metrics["oom_events"].get<std::int64_t>(), 0) << "the prediction should suffice";
  }
  EXPECT_EQ(epochs, 2);
}

TEST(BatchSizing, DefaultBudgetIsWhatTheHostBudgetLeavesTheFitIsCachedAndStepsAreSampled) {
  testing::TempDir dir;
  const auto store = testing::build_synthetic_store(dir.path(), 20000);
  // A cache of this test's own, so that the first run measures whatever ran before.
  const auto command = [&](const std::string& runs) {
    return "HEADROOM_CACHE_DIR=" + (dir / "cache").string() + " " + HEADROOM_BINARY +
           " normal --preset gat,student --store " + store.string() + " --runs-dir " +
           (dir / runs).string() +
           " --max-epochs 2 --batch-size 16 --threads 1 --progress false --step-metrics-every 3"
           " 2>&1";
  };
  std::string first;
  ASSERT_EQ(testing::run_command(command("runs"), &first), 0) << first;
  EXPECT_NE(first.find("memory plan: peak ="), std::string::npos) << first;
  EXPECT_NE(first.find("fit on"), std::string::npos) << first;
  EXPECT_NE(first.find("(default: what the host memory budget leaves)"), std::string::npos)
      << first;

  const auto metrics_file = dir / "runs" / "store" / "student_normal" / "metrics.jsonl";
  const auto epochs = testing::read_metrics(metrics_file, "epoch");
  const auto steps = testing::read_metrics(metrics_file, "step");
  ASSERT_EQ(epochs.size(), 2u);
  // The default CPU budget is what the host budget (95% of the limit) leaves after the process's
  // own memory.
  const auto limit = memory::host_memory_limit_bytes();
  std::size_t expected_steps = 0;
  for (const auto& epoch : epochs) {
    const auto budget = epoch["memory_budget"].get<std::int64_t>();
    EXPECT_LT(budget, limit * 95 / 100);
    EXPECT_GT(budget, limit / 2);
    EXPECT_EQ(budget, epochs[0]["memory_budget"].get<std::int64_t>());
    const auto peak = epoch["memory"]["cpu"]["peak_bytes"].get<double>();
    EXPECT_DOUBLE_EQ(epoch["utilization"].get<double>(), peak / static_cast<double>(budget));
    expected_steps += static_cast<std::size_t>(epoch["steps"].get<std::int64_t>() / 3);
  }
  ASSERT_EQ(steps.size(), expected_steps);
  ASSERT_GT(steps.size(), 0u);
  for (const auto& step : steps) {
    EXPECT_EQ(step["step"].get<std::int64_t>() % 3, 0);
    EXPECT_LE(step["tensor_bytes"].get<std::int64_t>(),
              step["peak_tensor_bytes"].get<std::int64_t>());
    EXPECT_GT(step["rss_bytes"].get<std::int64_t>(), 0);
    EXPECT_GT(step["utilization"].get<double>(), 0.0);
    EXPECT_LT(step["utilization"].get<double>(), 1.0);
  }

  // Another run of the same model reads the fit back instead of probing.
  std::string second;
  ASSERT_EQ(testing::run_command(command("runs-again"), &second), 0) << second;
  EXPECT_NE(second.find("cached fit of"), std::string::npos) << second;
  // A finished run is recognised before anything is measured.
  std::string finished;
  ASSERT_EQ(testing::run_command(command("runs"), &finished), 0) << finished;
  EXPECT_NE(finished.find("already complete"), std::string::npos) << finished;
  EXPECT_EQ(finished.find("memory plan"), std::string::npos) << finished;
}

}  // namespace
}  // namespace headroom
