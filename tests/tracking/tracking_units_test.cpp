// The pieces under the trackers: scalars from metric lines, params from a configuration, the
// TFRecord checksum.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "headroom/tensorboard/event_file_writer.hpp"
#include "headroom/tracking/metric_scalars.hpp"

namespace headroom::tracking {
namespace {

TEST(MetricScalars, EpochLinesByEpochAndStepLinesCountedAcrossEpochs) {
  MetricScalars scalars;
  const auto step = scalars.of({{"type", "step"}, {"epoch", 0}, {"step", 3}, {"rss_bytes", 10}});
  ASSERT_EQ(step.size(), 1U);
  EXPECT_EQ(step[0].key, "step/rss_bytes");
  EXPECT_EQ(step[0].step, 3);
  const auto epoch = scalars.of({{"type", "epoch"},
                                 {"epoch", 0},
                                 {"steps", 5},
                                 {"best", true},
                                 {"name", "text is left out"},
                                 {"validation", {{"f1", 0.5}, {"confusion", {{"tp", 2}}}}}});
  ASSERT_EQ(epoch.size(), 4U);  // best, steps, validation/confusion/tp, validation/f1
  EXPECT_EQ(epoch[0].key, "best");
  EXPECT_EQ(epoch[0].value, 1.0);
  EXPECT_EQ(epoch[2].key, "validation/confusion/tp");
  EXPECT_EQ(epoch[3].key, "validation/f1");
  for (const auto& s : epoch) EXPECT_EQ(s.step, 0);
  // The next epoch's samples continue after the first epoch's 5 steps.
  EXPECT_EQ(scalars.of({{"type", "step"}, {"epoch", 1}, {"step", 2}, {"rss_bytes", 1}})[0].step, 7);
  EXPECT_TRUE(scalars.of({{"type", "other"}, {"x", 1}}).empty());
}

TEST(MetricScalars, ParamsFlattenNestedObjectsAndKeepStringsRaw) {
  const auto flat = flatten_to_strings(
      {{"a", "text"}, {"b", nullptr}, {"c", {{"d", 1.5}}}, {"e", {1, 2}}, {"f", false}});
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"a", "text"}, {"b", "null"}, {"c.d", "1.5"}, {"e", "[1,2]"}, {"f", "false"}};
  EXPECT_EQ(flat, expected);
}

TEST(TensorBoardRecords, MaskedCrc32cMatchesTheCastagnoliCheckValue) {
  // CRC-32C of "123456789" is 0xE3069283 (the standard check value); TFRecord masks it.
  const std::uint32_t crc = 0xE3069283u;
  EXPECT_EQ(tensorboard::masked_crc32c("123456789"), ((crc >> 15) | (crc << 17)) + 0xa282ead8u);
  EXPECT_NE(tensorboard::masked_crc32c("123456780"), tensorboard::masked_crc32c("123456789"));
}

}  // namespace
}  // namespace headroom::tracking
