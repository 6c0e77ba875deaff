// Binary metrics against hand-worked confusion matrices and a pairwise-count ROC AUC.
#include "headroom/eval/binary_metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

namespace headroom::eval {
namespace {

// Eight graphs; scores 0.5 tie across the classes and sit exactly on the threshold.
const std::vector<std::uint8_t> kLabels = {1, 0, 1, 1, 0, 0, 1, 0};
const std::vector<float> kScores = {0.9F, 0.8F, 0.7F, 0.5F, 0.5F, 0.3F, 0.2F, 0.1F};

TEST(BinaryMetrics, HandWorkedExample) {
  const BinaryMetrics m = binary_metrics(kLabels, kScores, 0.5);
  // Predicted positive (score >= 0.5): graphs 0..4. TP = {0, 2, 3}, FP = {1, 4}, FN = {6},
  // TN = {5, 7}.
  EXPECT_EQ(m.confusion.true_positives, 3);
  EXPECT_EQ(m.confusion.false_positives, 2);
  EXPECT_EQ(m.confusion.false_negatives, 1);
  EXPECT_EQ(m.confusion.true_negatives, 2);
  EXPECT_EQ(m.count, 8);
  EXPECT_EQ(m.positives, 4);
  EXPECT_DOUBLE_EQ(m.accuracy, 5.0 / 8.0);
  EXPECT_DOUBLE_EQ(m.precision, 3.0 / 5.0);
  EXPECT_DOUBLE_EQ(m.recall, 3.0 / 4.0);
  EXPECT_NEAR(m.f1, 2.0 / 3.0, 1e-12);  // 2 * 0.6 * 0.75 / 1.35
  // Positive/negative pairs won: 0.9 beats 4, 0.7 beats 3, 0.5 beats 2 and ties 1 (half), 0.2
  // beats 1: 10.5 of 16.
  EXPECT_DOUBLE_EQ(m.roc_auc, 10.5 / 16.0);
  EXPECT_DOUBLE_EQ(roc_auc(kLabels, kScores), 10.5 / 16.0);
}

TEST(BinaryMetrics, ThresholdMovesPredictions) {
  const BinaryMetrics m = binary_metrics(kLabels, kScores, 0.75);
  // Predicted positive: graphs 0 and 1 only.
  EXPECT_EQ(m.confusion.true_positives, 1);
  EXPECT_EQ(m.confusion.false_positives, 1);
  EXPECT_EQ(m.confusion.false_negatives, 3);
  EXPECT_EQ(m.confusion.true_negatives, 3);
  EXPECT_DOUBLE_EQ(m.roc_auc, 10.5 / 16.0);  // threshold-free
}

TEST(BinaryMetrics, ZeroDivisionGivesZero) {
  // Nothing predicted positive: precision 0 (no division by zero), recall 0, F1 0.
  const std::vector<std::uint8_t> labels = {1, 0, 1};
  const std::vector<float> low = {0.1F, 0.2F, 0.3F};
  const BinaryMetrics none = binary_metrics(labels, low);
  EXPECT_EQ(none.confusion.true_positives + none.confusion.false_positives, 0);
  EXPECT_EQ(none.precision, 0.0);
  EXPECT_EQ(none.recall, 0.0);
  EXPECT_EQ(none.f1, 0.0);
  EXPECT_DOUBLE_EQ(none.accuracy, 1.0 / 3.0);

  // No positives at all: recall 0; everything predicted positive, so precision 0 too.
  const std::vector<std::uint8_t> normals = {0, 0};
  const std::vector<float> high = {0.9F, 0.6F};
  const BinaryMetrics no_positives = binary_metrics(normals, high);
  EXPECT_EQ(no_positives.positives, 0);
  EXPECT_EQ(no_positives.recall, 0.0);
  EXPECT_EQ(no_positives.precision, 0.0);
  EXPECT_EQ(no_positives.f1, 0.0);
  EXPECT_EQ(no_positives.accuracy, 0.0);
}

TEST(BinaryMetrics, SingleClassAucIsNaN) {
  const std::vector<float> scores = {0.1F, 0.9F, 0.4F};
  EXPECT_TRUE(std::isnan(roc_auc(std::vector<std::uint8_t>{0, 0, 0}, scores)));
  EXPECT_TRUE(std::isnan(roc_auc(std::vector<std::uint8_t>{1, 1, 1}, scores)));
  EXPECT_TRUE(std::isnan(binary_metrics(std::vector<std::uint8_t>{1, 1, 1}, scores).roc_auc));
  // A perfect scorer of a single class is still fully accurate.
  EXPECT_EQ(binary_metrics(std::vector<std::uint8_t>{1, 1, 1}, scores, 0.05).accuracy, 1.0);
}

TEST(BinaryMetrics, AucOfPerfectReversedAndConstantScorers) {
  const std::vector<std::uint8_t> labels = {0, 1, 0, 1, 1};
  EXPECT_EQ(roc_auc(labels, std::vector<float>{0.1F, 0.8F, 0.2F, 0.9F, 0.7F}), 1.0);
  EXPECT_EQ(roc_auc(labels, std::vector<float>{0.9F, 0.1F, 0.8F, 0.2F, 0.3F}), 0.0);
  EXPECT_EQ(roc_auc(labels, std::vector<float>{0.4F, 0.4F, 0.4F, 0.4F, 0.4F}), 0.5);
}

// The definition: the fraction of (positive, negative) pairs ordered correctly, ties one half.
double pairwise_auc(const std::vector<std::uint8_t>& labels, const std::vector<float>& scores) {
  double wins = 0.0;
  double pairs = 0.0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] == 0) continue;
    for (std::size_t j = 0; j < labels.size(); ++j) {
      if (labels[j] != 0) continue;
      pairs += 1.0;
      if (scores[i] > scores[j]) wins += 1.0;
      if (scores[i] == scores[j]) wins += 0.5;
    }
  }
  return wins / pairs;
}

TEST(BinaryMetrics, AucEqualsPairwiseCountOnRandomData) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 20; ++trial) {
    const std::size_t n = 50 + static_cast<std::size_t>(trial) * 37;
    std::vector<std::uint8_t> labels(n);
    std::vector<float> scores(n);
    for (std::size_t i = 0; i < n; ++i) {
      labels[i] = static_cast<std::uint8_t>(rng() % 3 == 0);
      // Coarse scores (20 levels) force many ties; positives shifted up a little.
      scores[i] = static_cast<float>(rng() % 20 + (labels[i] != 0 ? 3 : 0)) / 23.0F;
    }
    EXPECT_NEAR(roc_auc(labels, scores), pairwise_auc(labels, scores), 1e-12) << "trial " << trial;
  }
}

TEST(BinaryMetrics, RejectsMismatchedSizesAndNaN) {
  const std::vector<std::uint8_t> labels = {0, 1};
  EXPECT_THROW(binary_metrics(labels, std::vector<float>{0.5F}), std::invalid_argument);
  EXPECT_THROW(roc_auc(labels, std::vector<float>{0.5F, std::nanf("")}), std::invalid_argument);
}

TEST(BinaryMetrics, JsonHoldsEveryFieldAndNullForNaN) {
  const BinaryMetrics m = binary_metrics(kLabels, kScores);
  const nlohmann::json json = m;
  EXPECT_EQ(json.at("count").get<std::int64_t>(), 8);
  EXPECT_EQ(json.at("positives").get<std::int64_t>(), 4);
  EXPECT_DOUBLE_EQ(json.at("accuracy").get<double>(), 5.0 / 8.0);
  EXPECT_DOUBLE_EQ(json.at("precision").get<double>(), 0.6);
  EXPECT_DOUBLE_EQ(json.at("recall").get<double>(), 0.75);
  EXPECT_NEAR(json.at("f1").get<double>(), 2.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(json.at("roc_auc").get<double>(), 10.5 / 16.0);
  const auto& c = json.at("confusion");
  EXPECT_EQ(c.at("true_positives").get<int>(), 3);
  EXPECT_EQ(c.at("false_positives").get<int>(), 2);
  EXPECT_EQ(c.at("false_negatives").get<int>(), 1);
  EXPECT_EQ(c.at("true_negatives").get<int>(), 2);

  const nlohmann::json single =
      binary_metrics(std::vector<std::uint8_t>{0, 0}, std::vector<float>{0.1F, 0.2F});
  EXPECT_TRUE(single.at("roc_auc").is_null());
  EXPECT_NO_THROW((void)single.dump());  // NaN would make the dump invalid JSON
}

}  // namespace
}  // namespace headroom::eval
