// Claims (README, "Text graphs"; docs/text-graphs.md): TextGCN on r8 reaches the paper's accuracy
// (0.97; at least 0.96 here, one seed, full batch), and 20 Newsgroups trains inside
// `--memory-budget 256MB` (sampled steps) with every epoch's tensor peak within the budget and a
// test accuracy of at least 0.84. Each runs the documented command on ../shared/data's corpus, as
// a user would, and reads what the run wrote.
//
// 20 Newsgroups takes 9–26 minutes on this 2-core machine, so its suite is labelled `long` as well
// as `claims`: `ctest -L claims` runs it; CI's suite (`ctest -LE long`) does not (see
// docs/benchmarks.md, "CI time").
//
// Mutation seen to fail here: the full-batch training loss reading its seed nodes' logits in
// reverse order (rows misaligned with their labels, node_classifier_stage.cpp): r8's test accuracy
// fell to 0.5386 (run by hand with the mutated binary, `headroom run ../shared/data/text/r8`).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace headroom {
namespace {

namespace fs = std::filesystem;

nlohmann::json read_json(const fs::path& file) {
  return nlohmann::json::parse(testing::read_bytes(file));
}

// `headroom run CORPUS EXTRA` in `work` (its stores/ and runs/ there); the run's output on failure.
void run_corpus(const fs::path& work, const std::string& corpus, const std::string& extra) {
  const auto bin = fs::path(HEADROOM_TRAIN_BINARY).parent_path();
  fs::create_directories(work);
  std::string output;
  const auto status = testing::run_command(
      fmt::format("cd '{}' && '{}/headroom' run '{}' --threads 2 {} 2>&1", work.string(),
                  bin.string(), (testing::shared_data_dir() / "text" / corpus).string(), extra),
      &output);
  ASSERT_EQ(status, 0) << output;
}

TEST(ClaimsTextGcn, R8TestAccuracyIsAtLeast096) {
  if (testing::shared_data_dir().empty()) GTEST_SKIP() << "../shared/data is absent";
  testing::TempDir dir;
  ASSERT_NO_FATAL_FAILURE(run_corpus(dir / "work", "r8", ""));
  const auto evaluation = read_json(dir / "work" / "runs" / "r8" / "node_gcn" / "evaluation.json");
  EXPECT_EQ(evaluation["training"]["mode"], "full-batch");
  const auto& test = evaluation["splits"]["test"];
  EXPECT_EQ(test["count"].get<int>(), 2189);  // TextGCN's r8 test split
  EXPECT_GE(test["accuracy"].get<double>(), 0.96) << test.dump();
}

TEST(LongClaimsTextGcn, TwentyNewsgroupsInside256MBKeepsEveryEpochWithinItAndReaches084) {
  if (testing::shared_data_dir().empty()) GTEST_SKIP() << "../shared/data is absent";
  testing::TempDir dir;
  ASSERT_NO_FATAL_FAILURE(run_corpus(dir / "work", "20ng", "--memory-budget 256MB"));
  const auto run = dir / "work" / "runs" / "20ng" / "node_gcn";
  const auto evaluation = read_json(run / "evaluation.json");
  EXPECT_EQ(evaluation["training"]["mode"], "sampled");
  const auto epochs = testing::read_metrics(run / "metrics.jsonl", "epoch");
  ASSERT_FALSE(epochs.empty());
  for (const auto& epoch : epochs) {
    const auto budget = epoch["memory_budget"].get<std::int64_t>();
    EXPECT_LE(budget, 256'000'000);
    EXPECT_LE(epoch["memory"]["cpu"]["peak_bytes"].get<std::int64_t>(), budget)
        << "epoch " << epoch["epoch"];
    EXPECT_EQ(epoch["oom_events"].get<int>(), 0) << "epoch " << epoch["epoch"];
  }
  const auto& test = evaluation["splits"]["test"];
  EXPECT_EQ(test["count"].get<int>(), 7532);  // TextGCN's 20ng test split
  EXPECT_GE(test["accuracy"].get<double>(), 0.84) << test.dump();
}

}  // namespace
}  // namespace headroom
