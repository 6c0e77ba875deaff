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

}  // namespace
}  // namespace headroom
