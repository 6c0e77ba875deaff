// The run manifest (report/run_manifest.hpp): what the writer records after each step, what the
// reader refuses, and the report finding a run root's stages through it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "headroom/report/html_report.hpp"
#include "headroom/report/run_manifest.hpp"
#include "headroom/util/file_reader.hpp"
#include "test_support.hpp"

namespace headroom::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A store directory whose manifest carries the fields the writer reads (kind and seal).
fs::path fake_store(const fs::path& dir, const std::string& seal) {
  testing::write_text_file(dir / "store" / "manifest.json",
                           json{{"kind", "node-graph"}, {"manifest_xxh3", seal}}.dump());
  return dir / "store";
}

// A stage directory as a training stage leaves it: metrics, result and memory plan.
fs::path finished_stage(const fs::path& root, const std::string& name, const json& best_metrics) {
  testing::write_text_file(root / name / "metrics.jsonl", R"({"type":"epoch","epoch":0})"
                                                          "\n");
  testing::write_text_file(root / name / "result.json",
                           json{{"training", {{"best_metrics", best_metrics}}}}.dump());
  testing::write_text_file(root / name / "memory_plan.json", "{}");
  return root / name;
}

json manifest_on_disk(const fs::path& root) {
  return json::parse(util::read_file(root / kRunManifestFileName));
}

TEST(RunManifest, EveryStepRewritesTheFileSoAKilledRunLeavesWhatFinished) {
  testing::TempDir dir;
  const auto root = dir / "runs" / "corpus";
  RunManifestWriter writer(root, fake_store(dir.path(), "0123abcd"), kGraphClassificationTask);
  auto written = manifest_on_disk(root);
  EXPECT_EQ(written["format"], kRunManifestFormat);
  EXPECT_EQ(written["version"], kRunManifestVersion);
  EXPECT_FALSE(written["complete"].get<bool>());
  EXPECT_EQ(written["store"]["manifest_xxh3"], "0123abcd");
  EXPECT_EQ(written["store"]["kind"], "node-graph");
  EXPECT_EQ(written["store"]["path"], fs::absolute(dir / "store").lexically_normal().string());
  EXPECT_TRUE(written["stages"].empty());

  writer.add_stage({"teacher_curriculum",
                    finished_stage(root, "teacher_curriculum", {{"f1", 0.75}}),
                    false,
                    {{"f1", 0.75}, {"loss", 0.3}}});
  written = manifest_on_disk(root);
  ASSERT_EQ(written["stages"].size(), 1U);
  const auto& stage = written["stages"][0];
  EXPECT_EQ(stage["run_dir"], "teacher_curriculum");  // relative to the run root
  EXPECT_EQ(stage["result"], "teacher_curriculum/result.json");
  EXPECT_EQ(stage["memory_plan"], "teacher_curriculum/memory_plan.json");
  EXPECT_EQ(stage["metric"], (json{{"name", "f1"}, {"value", 0.75}}));
  EXPECT_FALSE(stage["reused"].get<bool>());
  EXPECT_FALSE(written["complete"].get<bool>());  // killed here: one stage, not complete

  fs::create_directories(root / "evaluation");
  writer.add_stage({"teacher_autoencoder", root / "teacher_autoencoder", true, {{"loss", 0.5}}});
  writer.set_evaluation(root / "evaluation" / "evaluation.json");
  writer.finish();
  written = manifest_on_disk(root);
  EXPECT_TRUE(written["complete"].get<bool>());
  EXPECT_EQ(written["evaluation"], "evaluation/evaluation.json");
  EXPECT_TRUE(written["stages"][1]["reused"].get<bool>());
  EXPECT_TRUE(written["stages"][1]["result"].is_null());  // no result.json in that directory
  EXPECT_EQ(written["stages"][1]["metric"]["name"], "loss");
  EXPECT_EQ(*read_run_manifest(root), written);
}

TEST(RunManifest, TheHeadlineIsTheFirstOfF1AccuracyAndLoss) {
  EXPECT_EQ(headline_metric({{"loss", 1.0}, {"accuracy", 0.5}})["name"], "accuracy");
  EXPECT_EQ(headline_metric({{"f1", 0.2}, {"accuracy", 0.5}})["value"], 0.2);
  EXPECT_TRUE(headline_metric({{"roc_auc", 0.9}}).is_null());
  EXPECT_TRUE(headline_metric({{"f1", "high"}}).is_null());
}

TEST(RunManifest, AStoreWithoutASealIsRefusedNamingItsManifest) {
  testing::TempDir dir;
  testing::write_text_file(dir / "store" / "manifest.json", R"({"kind":"windows"})");
  try {
    RunManifestWriter writer(dir / "runs", dir / "store", kGraphClassificationTask);
    FAIL() << "a store manifest without manifest_xxh3 was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("manifest.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("manifest_xxh3"), std::string::npos) << e.what();
  }
}

TEST(RunManifest, TheReaderRefusesWhatHeadroomDidNotWriteNamingTheFile) {
  testing::TempDir dir;
  EXPECT_FALSE(read_run_manifest(dir.path()).has_value());
  const auto refused = [&](const std::string& text, const std::string& reason) {
    testing::write_text_file(dir / kRunManifestFileName, text);
    try {
      const auto manifest = read_run_manifest(dir.path());
      manifest_stage_directories(*manifest, dir.path());
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(kRunManifestFileName), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  };
  refused("{\"format\":", "not valid JSON");
  refused(R"({"format":"something else","version":1})", "not a run manifest");
  refused(R"({"format":"headroom-run-manifest","version":99})", "version 99");
  refused(std::string(100, '[') + std::string(100, ']'), "nested deeper");
  refused(R"({"format":"headroom-run-manifest","version":1,"stages":[{"run_dir":"../elsewhere"}]})",
          "inside the run root");
  refused(R"({"format":"headroom-run-manifest","version":1,"stages":[{"run_dir":"/tmp"}]})",
          "inside the run root");
}

TEST(RunManifest, TheReportListsTheManifestsStagesInItsOrderThenStagesRunByHand) {
  testing::TempDir dir;
  const auto root = dir / "runs" / "d";
  finished_stage(root, "a_by_hand", {{"f1", 0.1}});
  RunManifestWriter writer(root, fake_store(dir.path(), "00"), kGraphClassificationTask);
  // Listed in the opposite of name order: the report follows the manifest, not the names.
  writer.add_stage({"z_second", finished_stage(root, "z_second", {{"f1", 0.5}}), false, {}});
  writer.add_stage({"m_third", finished_stage(root, "m_third", {{"f1", 0.6}}), false, {}});
  const auto data = collect_report_data(root);
  ASSERT_EQ(data["stages"].size(), 3U) << data["stages"].dump();
  EXPECT_EQ(data["stages"][0]["name"], "z_second");
  EXPECT_EQ(data["stages"][1]["name"], "m_third");
  EXPECT_EQ(data["stages"][2]["name"], "a_by_hand");
  // The report never lands on the manifest it read.
  EXPECT_THROW(write_html_report(root, root / kRunManifestFileName), std::runtime_error);
}

}  // namespace
}  // namespace headroom::report
