// What preprocessing makes of attack labels: attack types named consistently (a recording number
// after '-' or '_', a file without attack frames), and warnings for splits without a single label.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/store/store_summary.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

// can-train-and-test rows; `start` shifts the timestamps so that no two files repeat each other
// (a repeated training file would be left out as a duplicate).
std::string traffic(std::size_t rows, bool attacks, double start) {
  std::string text = "timestamp,arbitration_id,data_field,attack\n";
  for (std::size_t i = 0; i < rows; ++i)
    text += fmt::format("{:.6f},{:X},0102{:02X},{}\n", start + 0.001 * static_cast<double>(i),
                        0x100 * (1 + i % 4), i % 256, attacks && i % 40 < 8 ? 1 : 0);
  return text;
}

preprocess::PreprocessReport preprocess_quietly(const std::filesystem::path& data,
                                                const std::filesystem::path& store) {
  preprocess::PreprocessOptions options;
  options.progress = 0;
  return preprocess::preprocess_dataset(data, store, options);
}

std::vector<std::string> type_by_file(const store::GraphStore& store) {
  std::vector<std::string> types;
  for (const auto& file : store.metadata().files)
    types.push_back(file.path + "=" + store.metadata().attack_types.at(file.attack_type));
  return types;
}

TEST(AttackTypes, NumberSuffixesMergeAndFilesWithoutAttacksAreAttackFree) {
  testing::TempDir dir;
  testing::write_text_file(dir / "data/train_01_attack_free/accessory-1.csv",
                           traffic(1000, false, 1000));
  testing::write_text_file(dir / "data/train_02_with_attacks/DoS_1.csv", traffic(1000, true, 2000));
  testing::write_text_file(dir / "data/train_02_with_attacks/DoS-2.csv", traffic(1000, true, 3000));
  testing::write_text_file(dir / "data/test_01/accessory-3.csv", traffic(1000, false, 4000));
  testing::write_text_file(dir / "data/test_01/DoS-3.csv", traffic(1000, true, 5000));
  const auto report = preprocess_quietly(dir / "data", dir / "store");
  const auto store = store::GraphStore::open(dir / "store");
  // Before: "accessory", "dos" and "dos_1" — two names for one attack, and a drive as an attack.
  EXPECT_EQ(store.metadata().attack_types, (std::vector<std::string>{"attack-free", "dos"}));
  EXPECT_EQ(type_by_file(store), (std::vector<std::string>{
                                     "train_01_attack_free/accessory-1.csv=attack-free",
                                     "train_02_with_attacks/DoS-2.csv=dos",
                                     "train_02_with_attacks/DoS_1.csv=dos",
                                     "test_01/DoS-3.csv=dos",
                                     "test_01/accessory-3.csv=attack-free",
                                 }));
  ASSERT_EQ(report.attack_free_files.size(), 2u);
  EXPECT_EQ(report.attack_free_files[0].path, "train_01_attack_free/accessory-1.csv");
  EXPECT_EQ(report.attack_free_files[0].named_type, "accessory");
  EXPECT_EQ(report.attack_free_files[1].path, "test_01/accessory-3.csv");
}

TEST(LabelWarnings, ATestSplitWithoutAttackLabelsIsNamed) {
  testing::TempDir dir;
  testing::write_text_file(dir / "data/train_01/drive-1.csv", traffic(2000, false, 1000));
  testing::write_text_file(dir / "data/train_02/DoS-1.csv", traffic(2000, true, 2000));
  testing::write_text_file(dir / "data/test_01/DoS-2.csv", traffic(1000, true, 3000));
  testing::write_text_file(dir / "data/test_02/capture-1.csv", traffic(1000, false, 4000));
  preprocess_quietly(dir / "data", dir / "store");
  const auto summary = store::summarize_store(store::GraphStore::open(dir / "store"));
  const auto warnings = store::label_warnings(summary);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].rfind("test/test_02: no attack labels", 0), 0u) << warnings[0];
  EXPECT_NE(store::render_summary(summary).find("warning: test/test_02: no attack labels"),
            std::string::npos);
  EXPECT_EQ(store::summary_to_json(summary).at("warnings"), nlohmann::json(warnings));
}

TEST(LabelWarnings, UnlabelledTrainingIsNamedOnce) {
  testing::TempDir dir;
  testing::write_text_file(dir / "data/train_01/drive-1.csv", traffic(2000, false, 1000));
  testing::write_text_file(dir / "data/test_01/drive-2.csv", traffic(1000, false, 2000));
  preprocess_quietly(dir / "data", dir / "store");
  const auto warnings =
      store::label_warnings(store::summarize_store(store::GraphStore::open(dir / "store")));
  // train, then the test directory; validation (drawn from training) is not repeated.
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0].rfind("train: no attack labels", 0), 0u) << warnings[0];
  EXPECT_NE(warnings[0].find("autoencoder"), std::string::npos) << warnings[0];
  EXPECT_EQ(warnings[1].rfind("test/test_01: no attack labels", 0), 0u) << warnings[1];
}

// Split names are directory names: the table and the warnings print them escaped; the JSON keeps
// the name itself (JSON has its own escapes).
TEST(StoreSummaryNames, TheTableAndWarningsPrintSplitNamesEscaped) {
  store::StoreSummary summary;
  summary.path = "stores/s\x1b[2J";
  store::SplitSummary split;
  split.name = "test/t\x1b]0;title\x07\nFAKE";
  split.graphs = 4;  // all normal: a label warning names it
  summary.splits = {split};
  const auto text = store::render_summary(summary);
  for (const char c : text) EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << text;
  EXPECT_NE(text.find("stores/s\\x1B[2J"), std::string::npos) << text;
  EXPECT_NE(text.find("test/t\\x1B]0;title\\x07\\x0AFAKE"), std::string::npos) << text;
  EXPECT_NE(text.find("warning: test/t\\x1B]0;title"), std::string::npos) << text;
  EXPECT_EQ(store::summary_to_json(summary).at("splits")[0].at("name"), split.name);
}

}  // namespace
}  // namespace headroom
