#include "headroom/nn/relu_dropout.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>

#include "headroom/nn/checkpoint.hpp"

namespace headroom::nn {
namespace {

at::Tensor positive_input(std::int64_t n, at::ScalarType dtype = at::kFloat) {
  torch::manual_seed(3);
  return (torch::rand({n}) + 0.5).to(dtype);  // every element > 0: zero out means dropped
}

TEST(ReluDropout, KeepsTheExpectedFractionAndScalesTheKeptElements) {
  const auto x = positive_input(1 << 20);
  for (const double p : {0.1, 0.2, 0.5, 0.9}) {
    const auto out = relu_dropout(x, p, /*training=*/true);
    const auto kept = out != 0;
    const double fraction = kept.to(at::kDouble).mean().item<double>();
    // Binomial standard deviation at n = 2^20 is below 5e-4; 3e-3 is six of them.
    EXPECT_NEAR(fraction, 1.0 - p, 3e-3) << "p=" << p;
    EXPECT_TRUE(torch::allclose(out.masked_select(kept), x.masked_select(kept) / (1.0 - p)))
        << "p=" << p;
  }
}

TEST(ReluDropout, NeighbouringElementsAreIndependent) {
  // A weak hash of consecutive indices would correlate the decisions of adjacent elements.
  const auto kept = (relu_dropout(positive_input(1 << 20), 0.5, true) != 0).to(at::kDouble);
  const auto both = (kept.slice(0, 0, -1) * kept.slice(0, 1)).mean().item<double>();
  EXPECT_NEAR(both, 0.25, 3e-3);
  for (std::int64_t residue = 0; residue < 8; ++residue) {
    EXPECT_NEAR(kept.slice(0, residue, c10::nullopt, 8).mean().item<double>(), 0.5, 6e-3)
        << "residue " << residue;
  }
}

TEST(ReluDropout, IsReluOutsideTrainingOrWithoutDropout) {
  torch::manual_seed(4);
  const auto x = torch::randn({64, 7});
  EXPECT_TRUE(torch::equal(relu_dropout(x, 0.3, /*training=*/false), torch::relu(x)));
  EXPECT_TRUE(torch::equal(relu_dropout(x, 0.0, /*training=*/true), torch::relu(x)));
}

TEST(ReluDropout, NegativeInputsAreZeroAndNanStaysNan) {
  auto x = -torch::rand({4096}) - 0.1;
  EXPECT_EQ(relu_dropout(x, 0.5, true).abs().sum().item<float>(), 0.0f);
  // Both signs of NaN (x86's default NaN from 0/0 has the sign bit set), in every dtype: as with
  // torch's relu then dropout (NaN x 0 is NaN), garbage is never silently zeroed.
  for (const auto dtype : {at::kFloat, at::kDouble, at::kBFloat16, at::kHalf}) {
    for (const float nan :
         {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN()}) {
      const auto out = relu_dropout(torch::full({4096}, nan).to(dtype), 0.5, true);
      EXPECT_TRUE(torch::isnan(out).all().item<bool>()) << dtype;
    }
  }
}

TEST(ReluDropout, SameSeedSameMaskAndSuccessiveCallsDiffer) {
  const auto x = positive_input(4096);
  torch::manual_seed(11);
  const auto first = relu_dropout(x, 0.5, true);
  const auto second = relu_dropout(x, 0.5, true);
  torch::manual_seed(11);
  const auto again = relu_dropout(x, 0.5, true);
  EXPECT_TRUE(torch::equal(first, again));
  EXPECT_FALSE(torch::equal(first, second));
}

TEST(ReluDropout, GradientIsTheScaleWhereKeptAndPositive) {
  torch::manual_seed(5);
  const auto x = torch::randn({3000}, torch::requires_grad());
  const double p = 0.25;
  const auto out = relu_dropout(x, p, true);
  const auto upstream = torch::randn({3000});
  out.backward(upstream);
  const auto passes = (x.detach() > 0).logical_and(out.detach() != 0);
  const auto expected = torch::where(passes, upstream / (1.0 - p), torch::zeros_like(upstream));
  EXPECT_TRUE(torch::allclose(x.grad(), expected));
  EXPECT_GT(passes.sum().item<std::int64_t>(), 1000);
}

TEST(ReluDropout, ReducedPrecisionAndDoubleFollowTheFloatMask) {
  const auto x = positive_input(8192);
  torch::manual_seed(21);
  const auto reference = relu_dropout(x, 0.3, true);
  for (const auto dtype : {at::kDouble, at::kBFloat16, at::kHalf}) {
    torch::manual_seed(21);
    const auto out = relu_dropout(x.to(dtype), 0.3, true);
    EXPECT_EQ(out.scalar_type(), dtype);
    EXPECT_TRUE(torch::equal(out != 0, reference != 0)) << dtype;
    EXPECT_TRUE(torch::allclose(out.to(at::kFloat), reference, 1e-2, 1e-2)) << dtype;
  }
}

TEST(ReluDropout, CheckpointedRecomputationSeesTheSameMask) {
  torch::manual_seed(6);
  const auto w = torch::randn({16, 16}, torch::requires_grad());
  const auto x = torch::randn({256, 16});
  CheckpointBlock block = [&](const std::vector<at::Tensor>& in) {
    return std::vector<at::Tensor>{relu_dropout(torch::matmul(in[0], w), 0.4, true)};
  };
  torch::manual_seed(7);
  block({x})[0].sum().backward();
  const auto plain = w.grad().clone();
  w.mutable_grad().zero_();
  torch::manual_seed(7);
  checkpoint(block, {x}, {w})[0].sum().backward();
  EXPECT_TRUE(torch::allclose(w.grad(), plain));
}

TEST(ReluDropout, RejectsBadArguments) {
  const auto x = torch::ones({4});
  EXPECT_THROW(relu_dropout(x, 1.0, true), c10::Error);
  EXPECT_THROW(relu_dropout(x, -0.1, true), c10::Error);
  EXPECT_THROW(relu_dropout(torch::ones({4}, at::kLong), 0.5, true), c10::Error);
}

}  // namespace
}  // namespace headroom::nn
