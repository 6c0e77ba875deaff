// `inspect` and `preprocess` warn when a test split's windows are mostly CAN IDs the training
// vocabulary does not hold (an unseen vehicle), and only then.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/store/store_summary.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

std::string traffic_over(const std::vector<unsigned>& ids, std::size_t n, bool attacks) {
  std::string text = "timestamp,arbitration_id,data_field,attack\n";
  for (std::size_t i = 0; i < n; ++i)
    text += fmt::format("{:.6f},{:X},0102{:02X},{}\n", 1000.0 + 0.001 * i, ids[i % ids.size()],
                        i % 256, attacks && i % 40 < 8 ? 1 : 0);
  return text;
}

TEST(VocabularyWarning, OnlyATestSplitOfUnknownIdsIsFlagged) {
  testing::TempDir dir;
  const std::vector<unsigned> known = {0x100, 0x200, 0x300, 0x400};
  const std::vector<unsigned> unseen = {0x710, 0x720, 0x730, 0x100};  // one ID in four known
  testing::write_text_file(dir / "data/train_01_attack_free/a.csv",
                           traffic_over(known, 2000, false));
  testing::write_text_file(dir / "data/train_02_with_attacks/DoS-a.csv",
                           traffic_over(known, 1000, true));
  testing::write_text_file(dir / "data/test_01_known_vehicle_known_attack/DoS-a.csv",
                           traffic_over(known, 1000, true));
  testing::write_text_file(dir / "data/test_02_unknown_vehicle_known_attack/DoS-b.csv",
                           traffic_over(unseen, 1000, true));
  preprocess::PreprocessOptions options;
  options.progress = 0;
  preprocess::preprocess_dataset(dir / "data", dir / "store", options);
  const auto summary = store::summarize_store(store::GraphStore::open(dir / "store"));
  for (const auto& split : summary.splits) {
    if (split.name == "test/test_02_unknown_vehicle_known_attack") {
      EXPECT_EQ(split.mostly_unknown_graphs, split.graphs) << split.name;
    } else if (split.name != "test") {
      EXPECT_EQ(split.mostly_unknown_graphs, 0U) << split.name;
    }
  }
  const auto warnings = store::vocabulary_warnings(summary);
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_NE(warnings[0].find("test_02_unknown_vehicle_known_attack"), std::string::npos);
  EXPECT_NE(store::render_summary(summary).find("warning: test/test_02"), std::string::npos);
}

// Training traffic where two IDs appear only in attack frames (as fuzzing injects random ones):
// --vocabulary-from normal leaves them out of the vocabulary, "all" (upstream) keeps them.
TEST(VocabularyFrom, NormalFramesOnlyLeaveAttackOnlyIdsOut) {
  testing::TempDir dir;
  std::string attacks = "timestamp,arbitration_id,data_field,attack\n";
  const std::vector<unsigned> normal = {0x100, 0x200, 0x300};
  for (std::size_t i = 0; i < 1200; ++i) {
    const bool attack = i % 30 == 0;
    const unsigned id = attack ? (i % 60 == 0 ? 0x7A1 : 0x7A2) : normal[i % normal.size()];
    attacks +=
        fmt::format("{:.6f},{:X},0102{:02X},{}\n", 1000.0 + 0.001 * i, id, i % 256, attack ? 1 : 0);
  }
  testing::write_text_file(dir / "data/train_01_attack_free/a.csv",
                           traffic_over(normal, 2000, false));
  testing::write_text_file(dir / "data/train_02_with_attacks/fuzzing-a.csv", attacks);
  testing::write_text_file(dir / "data/test_01_known_vehicle_known_attack/fuzzing-a.csv", attacks);
  preprocess::PreprocessOptions options;
  options.progress = 0;
  preprocess::preprocess_dataset(dir / "data", dir / "all", options);
  options.vocabulary_from = "normal";
  preprocess::preprocess_dataset(dir / "data", dir / "normal", options);

  const auto all = store::GraphStore::open(dir / "all");
  const auto from_normal = store::GraphStore::open(dir / "normal");
  EXPECT_EQ(all.metadata().vocabulary,
            (std::vector<std::uint32_t>{0x100, 0x200, 0x300, 0x7A1, 0x7A2}));
  EXPECT_EQ(from_normal.metadata().vocabulary, (std::vector<std::uint32_t>{0x100, 0x200, 0x300}));
  EXPECT_EQ(from_normal.metadata().vocabulary_from, "normal");
  EXPECT_NE(store::render_summary(store::summarize_store(from_normal)).find("from normal frames"),
            std::string::npos);
  // The same windows either way: only the ID indices of attack-only IDs differ.
  EXPECT_EQ(all.num_graphs(), from_normal.num_graphs());

  options.vocabulary_from = "attacks";
  EXPECT_THROW(preprocess::preprocess_dataset(dir / "data", dir / "bad", options),
               std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(dir / "bad"));
}

}  // namespace
}  // namespace headroom
