// Calibrated decision thresholds against brute force over every candidate threshold, and the
// metrics added for calibrated decisions (false-positive rate, MCC, PR AUC) against values worked
// by hand (scikit-learn's documented example for average precision).
#include "headroom/eval/decision_threshold.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace headroom::eval {
namespace {

double f1_at(const std::vector<std::uint8_t>& labels, const std::vector<float>& scores,
             double threshold) {
  return binary_metrics(labels, scores, threshold).f1;
}

// Every distinct score as the threshold: the best F1, and the highest score reaching it.
std::pair<double, float> brute_force_f1(const std::vector<std::uint8_t>& labels,
                                        const std::vector<float>& scores) {
  double best = -1;
  float at = 0;
  for (const float s : std::set<float>(scores.begin(), scores.end())) {
    const double f1 = f1_at(labels, scores, s);
    if (f1 >= best) {  // ascending: ties go to the higher score
      best = f1;
      at = s;
    }
  }
  return {best, at};
}

TEST(DecisionThreshold, F1OptimalEqualsBruteForceOverValidationScores) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = 1 + random() % 300;
    std::vector<std::uint8_t> labels(n);
    std::vector<float> scores(n);
    // Coarse scores make ties common; a shift makes the classes overlap.
    const int levels = 2 + static_cast<int>(random() % 40);
    for (std::size_t i = 0; i < n; ++i) {
      labels[i] = random() % 3 == 0 ? 1 : 0;
      const int level = static_cast<int>(random() % levels) + (labels[i] ? levels / 3 : 0);
      scores[i] = static_cast<float>(level) / static_cast<float>(levels + levels / 3);
    }
    if (std::none_of(labels.begin(), labels.end(), [](auto l) { return l != 0; })) labels[0] = 1;
    const auto [best_f1, best_score] = brute_force_f1(labels, scores);
    const double threshold = f1_optimal_threshold(labels, scores);
    EXPECT_DOUBLE_EQ(f1_at(labels, scores, threshold), best_f1) << "trial " << trial;
    // It flags exactly what the brute force's threshold flags, and lies halfway to the next
    // lower score.
    float next_lower = -1;
    for (const float s : scores)
      if (s < best_score) next_lower = std::max(next_lower, s);
    const double expected =
        next_lower < 0 ? best_score : 0.5 * (double{best_score} + double{next_lower});
    EXPECT_DOUBLE_EQ(threshold, expected) << "trial " << trial;
  }
}

TEST(DecisionThreshold, SeparableScoresGetTheMiddleOfTheGap) {
  const std::vector<std::uint8_t> labels = {0, 0, 0, 1, 1};
  const std::vector<float> scores = {0.01F, 0.02F, 0.1F, 0.9F, 0.99F};
  EXPECT_NEAR(f1_optimal_threshold(labels, scores), 0.5, 1e-6);
  EXPECT_THROW(f1_optimal_threshold(std::vector<std::uint8_t>{0, 0}, std::vector<float>{0, 1}),
               std::invalid_argument);
  EXPECT_THROW(f1_optimal_threshold(labels, std::vector<float>{0, 1}), std::invalid_argument);
  EXPECT_THROW(f1_optimal_threshold(labels, std::vector<float>{0, 1, NAN, 0, 1}),
               std::invalid_argument);
}

TEST(DecisionThreshold, FprTargetBoundsFalseAlarmsOnNegatives) {
  std::mt19937 random(3);
  std::uniform_real_distribution<float> uniform(0, 1);
  std::vector<std::uint8_t> labels(1000);
  std::vector<float> scores(1000);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    labels[i] = i % 4 == 0 ? 1 : 0;
    scores[i] = uniform(random);
  }
  for (const double target : {0.0, 0.001, 0.01, 0.1, 0.5}) {
    const double t = fpr_threshold(labels, scores, target);
    const auto m = binary_metrics(labels, scores, t);
    EXPECT_LE(m.false_positive_rate, target) << target;
    // The lowest such threshold: the next lower negative score would break the target.
    float below = -1;
    for (std::size_t i = 0; i < labels.size(); ++i)
      if (labels[i] == 0 && scores[i] < t) below = std::max(below, scores[i]);
    EXPECT_GT(binary_metrics(labels, scores, below).false_positive_rate, target) << target;
  }
  EXPECT_THROW(fpr_threshold(labels, scores, 1.0), std::invalid_argument);
  EXPECT_THROW(fpr_threshold(std::vector<std::uint8_t>{1}, std::vector<float>{0.3F}, 0.1),
               std::invalid_argument);
}

TEST(DecisionThreshold, CalibrationRecordsItsValidationMetrics) {
  const std::vector<std::uint8_t> labels = {0, 0, 1, 1};
  const std::vector<float> scores = {0.1F, 0.4F, 0.35F, 0.8F};
  const auto f1 = calibrate_decision(labels, scores, "f1");
  EXPECT_EQ(f1.method, "f1");
  // Flagging 0.35 and up catches both attacks with one false alarm: F1 0.8, the best here.
  EXPECT_NEAR(f1.threshold, 0.5 * (0.35 + 0.1), 1e-6);
  EXPECT_NEAR(f1.validation.f1, 0.8, 1e-9);
  const auto fpr = calibrate_decision(labels, scores, "fpr", 0.0);
  EXPECT_GT(fpr.threshold, 0.4);
  EXPECT_EQ(fpr.validation.confusion.false_positives, 0);
  EXPECT_THROW(calibrate_decision(labels, scores, "youden"), std::invalid_argument);
  const nlohmann::json json = fpr;
  const auto back = json.get<DecisionCalibration>();
  EXPECT_EQ(back.method, "fpr");
  EXPECT_DOUBLE_EQ(back.threshold, fpr.threshold);
}

// Where the attacks score below every normal window, the F1-optimal cut is the lowest score: it
// flags every window (F1 2/3 from recall 1 with half the windows attacks). That is no decision,
// and calibration refuses it, saying why; a cut that spares one normal window is kept.
TEST(DecisionThreshold, RefusesAThresholdThatFlagsEveryValidationWindow) {
  const std::vector<std::uint8_t> labels = {0, 0, 1, 1};
  const std::vector<float> inverted = {0.9F, 0.8F, 0.2F, 0.1F};
  EXPECT_LT(f1_optimal_threshold(labels, inverted), 0.1 + 1e-6);
  try {
    calibrate_decision(labels, inverted, "f1");
    FAIL() << "a flag-everything threshold was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("flags every one of the 4 validation windows"),
              std::string::npos)
        << e.what();
  }
  const std::vector<float> overlapping = {0.9F, 0.1F, 0.5F, 0.6F};
  EXPECT_EQ(calibrate_decision(labels, overlapping, "f1").validation.confusion.false_positives, 1);
  // Without a normal window, flagging every window is right.
  const std::vector<std::uint8_t> attacks_only = {1, 1};
  EXPECT_NO_THROW(calibrate_decision(attacks_only, std::vector<float>{0.2F, 0.3F}, "f1"));
}

TEST(BinaryMetricsForDecisions, FprMccAndAveragePrecision) {
  const std::vector<std::uint8_t> labels = {0, 0, 1, 1};
  const std::vector<float> scores = {0.1F, 0.4F, 0.35F, 0.8F};
  // scikit-learn's average_precision_score example: 0.8333.
  EXPECT_NEAR(average_precision(labels, scores), 5.0 / 6.0, 1e-9);
  const auto m = binary_metrics(labels, scores, 0.5);  // flags 0.8 only: TP 1, FN 1, TN 2
  EXPECT_DOUBLE_EQ(m.false_positive_rate, 0.0);
  EXPECT_NEAR(m.mcc, 2.0 / std::sqrt(12.0), 1e-12);
  EXPECT_NEAR(m.pr_auc, 5.0 / 6.0, 1e-9);
  const auto all = binary_metrics(labels, scores, 0.0);  // flags everything
  EXPECT_DOUBLE_EQ(all.false_positive_rate, 1.0);
  EXPECT_DOUBLE_EQ(all.mcc, 0.0);
  EXPECT_TRUE(std::isnan(
      average_precision(std::vector<std::uint8_t>{0, 0}, std::vector<float>{0.1F, 0.2F})));
}

}  // namespace
}  // namespace headroom::eval
