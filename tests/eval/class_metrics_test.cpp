#include "headroom/eval/class_metrics.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace headroom::eval {
namespace {

TEST(ClassMetrics, AccuracyAndMacroF1ByHand) {
  // Class 0: 3 labelled, 2 found, 1 false alarm -> F1 = 2·2 / (3 + 3) = 2/3.
  // Class 1: 2 labelled, 1 found, 1 false alarm -> F1 = 2·1 / (2 + 2) = 1/2.
  // Class 2: 1 labelled, 1 found, 0 false alarms -> F1 = 1.
  // Class 3: never labelled nor predicted -> not averaged.
  const std::vector<std::int32_t> labels = {0, 0, 0, 1, 1, 2};
  const std::vector<std::int32_t> predicted = {0, 0, 1, 1, 0, 2};
  const auto m = class_metrics(labels, predicted, 4);
  EXPECT_EQ(m.count, 6U);
  EXPECT_DOUBLE_EQ(m.accuracy, 4.0 / 6.0);
  EXPECT_DOUBLE_EQ(m.f1_per_class[0], 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(m.f1_per_class[1], 0.5);
  EXPECT_DOUBLE_EQ(m.f1_per_class[2], 1.0);
  EXPECT_DOUBLE_EQ(m.f1_per_class[3], 0.0);
  EXPECT_DOUBLE_EQ(m.macro_f1, (2.0 / 3.0 + 0.5 + 1.0) / 3.0);
}

TEST(ClassMetrics, AClassOnlyPredictedCountsAsZero) {
  const std::vector<std::int32_t> labels = {0, 0};
  const std::vector<std::int32_t> predicted = {0, 1};
  const auto m = class_metrics(labels, predicted, 2);
  // Class 0: F1 = 2·1 / (2 + 1); class 1 (predicted, never labelled): 0.
  EXPECT_DOUBLE_EQ(m.macro_f1, (2.0 / 3.0 + 0.0) / 2.0);
}

TEST(ClassMetrics, RefusesMismatchedOrOutOfRangeInput) {
  const std::vector<std::int32_t> two = {0, 1};
  const std::vector<std::int32_t> one = {0};
  EXPECT_THROW(class_metrics(two, one, 2), std::invalid_argument);
  EXPECT_THROW(class_metrics(two, two, 1), std::invalid_argument);
  const std::vector<std::int32_t> negative = {-1, 0};
  EXPECT_THROW(class_metrics(negative, two, 2), std::invalid_argument);
}

}  // namespace
}  // namespace headroom::eval
