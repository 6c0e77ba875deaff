// The label-free threshold: robust statistics of a recording's first windows, worked by hand, and
// unmoved by attacks among them. (Mutation seen to fail: the threshold set on every score at or
// below the last round's fence, as it was, in place of the scores no round dropped.)
#include "headroom/eval/label_free_threshold.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "headroom/eval/decision_threshold.hpp"

namespace headroom::eval {
namespace {

double just_above(double value) {
  return std::nextafter(value, std::numeric_limits<double>::infinity());
}

// {1, 2, 3, 4, 100}: median 3, MAD median{2, 1, 0, 1, 97} = 1, fence 3 + 3 x 1.4826 = 7.45 drops
// 100; then {1, 2, 3, 4}: median 2.5, MAD 1, fence 6.95 drops nothing.
TEST(LabelFreeThreshold, FenceWorkedByHand) {
  const std::vector<float> scores = {3, 1, 100, 4, 2};
  const RobustFence fence = robust_fence(scores, 3.0);
  EXPECT_DOUBLE_EQ(fence.median, 2.5);
  EXPECT_DOUBLE_EQ(fence.spread, 1.4826);
  EXPECT_DOUBLE_EQ(fence.fence, 2.5 + 3 * 1.4826);
  EXPECT_EQ(fence.inliers, 4U);
  // At a 0% target the threshold is just above the highest inlier, 4: the 100 is flagged.
  EXPECT_EQ(label_free_threshold(scores, 0.0, 3.0), just_above(4.0));
}

// A fence that rises again: {2, 6, 19, 11, 6, 9, 60}: median 9, MAD median{7, 3, 10, 2, 3, 0, 51}
// = 3 (spread 4.4478), fence 22.34 drops 60; then {2, 6, 19, 11, 6, 9}: median 7.5, MAD 2.5
// (spread 3.7065), fence 18.62 drops 19; then {2, 6, 11, 6, 9}: median 6, MAD 3, fence 19.34,
// nothing more. The last fence lies above the 19 the second round dropped: the inliers are the
// five scores at or below 18.62. At a 20% target, floor(0.2 x 5) = 1 inlier may be flagged: the
// threshold is just above the 2nd highest inlier, 9 (with the 19 readmitted, six scores: just
// above 11).
TEST(LabelFreeThreshold, AScoreARoundDroppedStaysOutWhenALaterFenceRises) {
  const std::vector<float> scores = {2, 6, 19, 11, 6, 9, 60};
  const RobustFence fence = robust_fence(scores, 3.0);
  EXPECT_DOUBLE_EQ(fence.median, 6.0);
  EXPECT_DOUBLE_EQ(fence.spread, 3 * 1.4826);
  EXPECT_DOUBLE_EQ(fence.fence, 7.5 + 3 * 2.5 * 1.4826);
  EXPECT_EQ(fence.inliers, 5U);
  EXPECT_EQ(label_free_threshold(scores, 0.2, 3.0), just_above(9.0));
}

// A spread that falls to 0: {5 x5, 9 x4, 100, 120}: median 9, MAD median{4 x5, 0 x4, 91, 111} = 4
// (spread 5.9304), fence 26.79 drops 100 and 120; then {5 x5, 9 x4}: median 5, MAD 0, so this
// round's fence is infinite and drops nothing. The inliers are the nine scores at or below 26.79.
// At a 10% target, floor(0.1 x 9) = 0: just above the highest inlier, 9 (with every score below
// the infinite fence, floor(0.1 x 11) = 1: just above 100).
TEST(LabelFreeThreshold, AnInfiniteLastFenceReadmitsNothing) {
  const std::vector<float> scores = {5, 9, 5, 100, 9, 5, 120, 9, 5, 9, 5};
  const RobustFence fence = robust_fence(scores, 3.0);
  EXPECT_DOUBLE_EQ(fence.median, 5.0);
  EXPECT_EQ(fence.spread, 0.0);
  EXPECT_DOUBLE_EQ(fence.fence, 9 + 3 * 4 * 1.4826);
  EXPECT_EQ(fence.inliers, 9U);
  EXPECT_EQ(label_free_threshold(scores, 0.1, 3.0), just_above(9.0));
}

// 180 normal windows and 20 attack windows far above them (10% of the sample): the threshold is
// the one the normal windows alone give, where the plain percentile lands among the attacks.
TEST(LabelFreeThreshold, AttacksAmongTheFirstWindowsDoNotMoveIt) {
  std::vector<float> normal;
  for (int i = 0; i < 180; ++i)  // a bell-shaped spread around 1.0, deterministic
    normal.push_back(1.0F + 0.05F * static_cast<float>(std::sin(i * 1.7) + std::sin(i * 0.31)));
  std::vector<float> contaminated = normal;
  for (int i = 0; i < 20; ++i) contaminated.insert(contaminated.begin() + i * 9, 5.0F + 0.1F * i);
  const double clean = label_free_threshold(normal, 0.01, kDefaultFenceMads);
  const double robust = label_free_threshold(contaminated, 0.01, kDefaultFenceMads);
  EXPECT_EQ(robust, clean);
  EXPECT_LT(robust, 1.2);
  const std::vector<std::uint8_t> all_normal(contaminated.size(), 0);
  EXPECT_GT(fpr_threshold(all_normal, contaminated, 0.01), 5.0);  // what no fence would give
  const RobustFence fence = robust_fence(contaminated, kDefaultFenceMads);
  EXPECT_LE(fence.inliers, normal.size());
  EXPECT_NEAR(fence.median, 1.0, 0.02);
}

// Identical scores have no spread: nothing is fenced off, and the threshold is just above them.
TEST(LabelFreeThreshold, NoSpreadFencesNothing) {
  const std::vector<float> scores(50, 0.25F);
  const RobustFence fence = robust_fence(scores, 3.0);
  EXPECT_EQ(fence.spread, 0.0);
  EXPECT_TRUE(std::isinf(fence.fence));
  EXPECT_EQ(fence.inliers, scores.size());
  EXPECT_EQ(label_free_threshold(scores, 0.01, 3.0), just_above(0.25));
}

TEST(LabelFreeThreshold, RefusesWhatHasNoThreshold) {
  EXPECT_THROW(robust_fence({}, 3.0), std::invalid_argument);
  const std::vector<float> nan = {1.0F, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_THROW(robust_fence(nan, 3.0), std::invalid_argument);
  const std::vector<float> scores = {1.0F, 2.0F};
  EXPECT_THROW(robust_fence(scores, 0.0), std::invalid_argument);
  EXPECT_THROW(label_free_threshold(scores, 1.0, 3.0), std::invalid_argument);
}

}  // namespace
}  // namespace headroom::eval
