// With a memory budget, a stage measures its step's peak on probe batches, packs every epoch by
// predicted bytes, and then trains inside the budget without needing the OOM guard.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

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
  std::ifstream in(dir / "runs" / "store" / "teacher_normal" / "metrics.jsonl");
  std::string line;
  int epochs = 0;
  const auto train_graphs = store::GraphStore::open(store).train_ids().size();
  while (std::getline(in, line)) {
    const auto metrics = nlohmann::json::parse(line);
    ++epochs;
    EXPECT_LE(metrics["memory"]["cpu"]["peak_bytes"].get<std::int64_t>(), budget);
    // The budget, not the (huge) graph cap, cut the epoch into several batches.
    EXPECT_GT(metrics["steps"].get<std::int64_t>(), 1);
    EXPECT_EQ(metrics["graphs"].get<std::size_t>(), train_graphs);  // every graph, once
    EXPECT_EQ(metrics["oom_events"].get<std::int64_t>(), 0) << "the prediction should suffice";
  }
  EXPECT_EQ(epochs, 2);
}

}  // namespace
}  // namespace headroom
