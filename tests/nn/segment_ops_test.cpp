#include "headroom/nn/segment_ops.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <vector>

namespace headroom::nn {
namespace {

struct Case {
  at::Tensor src;    // float32 [E, F]
  at::Tensor index;  // int64 [E]
  std::int64_t segments;
};

// Segment 3 of 6 stays empty; the others get several rows in shuffled order.
Case make_case() {
  torch::manual_seed(11);
  const std::int64_t rows = 40;
  auto index = torch::randint(0, 5, {rows}, torch::kLong);
  index = torch::where(index == 3, torch::full_like(index, 5), index);
  return {torch::randn({rows, 3}) * 4, index, 6};
}

std::vector<std::vector<double>> naive_reduce(const Case& c, bool mean) {
  const auto rows = c.src.size(0);
  const auto features = c.src.size(1);
  std::vector<std::vector<double>> out(
      static_cast<std::size_t>(c.segments),
      std::vector<double>(static_cast<std::size_t>(features), 0.0));
  std::vector<double> counts(static_cast<std::size_t>(c.segments), 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    auto s = static_cast<std::size_t>(c.index[r].item<std::int64_t>());
    counts[s] += 1;
    for (std::int64_t f = 0; f < features; ++f)
      out[s][static_cast<std::size_t>(f)] += c.src[r][f].item<double>();
  }
  if (mean) {
    for (std::size_t s = 0; s < out.size(); ++s)
      for (auto& v : out[s]) v = counts[s] > 0 ? v / counts[s] : 0.0;
  }
  return out;
}

std::vector<std::vector<double>> naive_softmax(const Case& c) {
  const auto rows = c.src.size(0);
  const auto features = c.src.size(1);
  std::vector<std::vector<double>> out(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t f = 0; f < features; ++f) {
      double total = 0;
      for (std::int64_t q = 0; q < rows; ++q) {
        if (c.index[q].item<std::int64_t>() == c.index[r].item<std::int64_t>())
          total += std::exp(c.src[q][f].item<double>());
      }
      out[static_cast<std::size_t>(r)].push_back(std::exp(c.src[r][f].item<double>()) / total);
    }
  }
  return out;
}

void expect_near(const at::Tensor& actual, const std::vector<std::vector<double>>& expected,
                 double tolerance) {
  auto values = actual.to(torch::kDouble);
  ASSERT_EQ(values.size(0), static_cast<std::int64_t>(expected.size()));
  for (std::size_t r = 0; r < expected.size(); ++r) {
    for (std::size_t f = 0; f < expected[r].size(); ++f) {
      EXPECT_NEAR(values[static_cast<std::int64_t>(r)][static_cast<std::int64_t>(f)].item<double>(),
                  expected[r][f], tolerance * std::max(1.0, std::abs(expected[r][f])))
          << r << "," << f;
    }
  }
}

class SegmentOpsDtypeTest : public ::testing::TestWithParam<at::ScalarType> {
 protected:
  double tolerance() const { return GetParam() == at::kFloat ? 1e-5 : 2e-2; }
};

TEST_P(SegmentOpsDtypeTest, SumMatchesNaiveLoop) {
  auto c = make_case();
  c.src = c.src.to(GetParam());
  auto expected = naive_reduce(c, false);
  auto out = segment_sum(c.src, c.index, c.segments);
  EXPECT_EQ(out.scalar_type(), GetParam());
  expect_near(out, expected, tolerance());
}

TEST_P(SegmentOpsDtypeTest, MeanMatchesNaiveLoopAndEmptySegmentIsZero) {
  auto c = make_case();
  c.src = c.src.to(GetParam());
  auto expected = naive_reduce(c, true);
  auto out = segment_mean(c.src, c.index, c.segments);
  EXPECT_EQ(out.scalar_type(), GetParam());
  expect_near(out, expected, tolerance());
  EXPECT_EQ(out[3].abs().sum().item<double>(), 0.0);
}

TEST_P(SegmentOpsDtypeTest, SoftmaxMatchesNaiveLoop) {
  auto c = make_case();
  c.src = c.src.to(GetParam());
  auto expected = naive_softmax(c);
  auto out = segment_softmax(c.src, c.index, c.segments);
  EXPECT_EQ(out.scalar_type(), GetParam());
  expect_near(out, expected, tolerance());
}

INSTANTIATE_TEST_SUITE_P(Dtypes, SegmentOpsDtypeTest,
                         ::testing::Values(at::kFloat, at::kBFloat16, at::kHalf));

TEST(SegmentOpsTest, SoftmaxIsStableForLargeScores) {
  auto src = torch::tensor({1000.0f, 1001.0f, -1000.0f, -1002.0f}).view({4, 1});
  auto index = torch::tensor({0, 0, 1, 1}, torch::kLong);
  auto out = segment_softmax(src, index, 2);
  const double a = 1.0 / (1.0 + std::exp(1.0));
  const double b = 1.0 / (1.0 + std::exp(-2.0));
  EXPECT_NEAR(out[0][0].item<double>(), a, 1e-6);
  EXPECT_NEAR(out[1][0].item<double>(), 1 - a, 1e-6);
  EXPECT_NEAR(out[2][0].item<double>(), b, 1e-6);
  EXPECT_NEAR(out[3][0].item<double>(), 1 - b, 1e-6);
}

TEST(SegmentOpsTest, SoftmaxGradientMatchesDenseSoftmax) {
  // One segment: the segment softmax must equal torch::softmax, gradients included.
  torch::manual_seed(12);
  auto base = torch::randn({7, 2});
  auto a = base.clone().requires_grad_(true);
  auto b = base.clone().requires_grad_(true);
  auto weights = torch::randn({7, 2});
  (segment_softmax(a, torch::zeros({7}, torch::kLong), 1) * weights).sum().backward();
  (torch::softmax(b, 0) * weights).sum().backward();
  EXPECT_TRUE(torch::allclose(a.grad(), b.grad(), 1e-5, 1e-6));
}

TEST(SegmentOpsTest, GlobalMeanPoolAveragesEachGraph) {
  auto x = torch::tensor({1.0f, 2.0f, 3.0f, 10.0f, 20.0f}).view({5, 1});
  auto batch = torch::tensor({0, 0, 0, 1, 1}, torch::kLong);
  auto pooled = global_mean_pool(x, batch, 2);
  EXPECT_NEAR(pooled[0][0].item<double>(), 2.0, 1e-6);
  EXPECT_NEAR(pooled[1][0].item<double>(), 15.0, 1e-6);
}

TEST(SegmentOpsTest, RejectsMismatchedIndex) {
  EXPECT_THROW(segment_sum(torch::zeros({3, 2}), torch::zeros({4}, torch::kLong), 2), c10::Error);
  EXPECT_THROW(segment_sum(torch::zeros({3, 2}), torch::zeros({3}, torch::kInt), 2), c10::Error);
}

}  // namespace
}  // namespace headroom::nn
