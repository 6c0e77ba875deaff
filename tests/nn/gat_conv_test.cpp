#include "headroom/nn/gat_conv.hpp"

#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <array>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "headroom/nn/segment_ops.hpp"

namespace headroom::nn {
namespace {

double leaky(double v) { return v > 0 ? v : 0.2 * v; }

at::Tensor edges(const std::vector<std::pair<std::int64_t, std::int64_t>>& list) {
  auto index = torch::empty({2, static_cast<std::int64_t>(list.size())}, torch::kLong);
  for (std::size_t e = 0; e < list.size(); ++e) {
    index[0][static_cast<std::int64_t>(e)] = list[e].first;
    index[1][static_cast<std::int64_t>(e)] = list[e].second;
  }
  return index;
}

void set(GATConv& conv, const at::Tensor& weight, const at::Tensor& att_src,
         const at::Tensor& att_dst, const at::Tensor& bias) {
  torch::NoGradGuard no_grad;
  conv->weight.copy_(weight);
  conv->att_src.copy_(att_src);
  conv->att_dst.copy_(att_dst);
  conv->bias_.copy_(bias);
}

// x0 = (1, 0), x1 = (0, 1), x2 = (1, 1); edges 0->1, 2->1, 1->0, 0->2 and a self-loop 1->1 that
// the convolution must replace by its own single loop.
at::Tensor tiny_x() { return torch::tensor({1.0f, 0.0f, 0.0f, 1.0f, 1.0f, 1.0f}).view({3, 2}); }
at::Tensor tiny_edges() { return edges({{0, 1}, {2, 1}, {1, 0}, {0, 2}, {1, 1}}); }

TEST(GATConvTest, OneHeadMatchesHandComputation) {
  GATConvOptions options;
  options.in_channels = 2;
  options.out_channels = 2;
  GATConv conv(options);
  // W = identity, so h = x. a_src = (1, 2): alpha_src = (1, 2, 3); a_dst = (0.5, -3):
  // alpha_dst = (0.5, -3, -2.5).
  set(conv, torch::eye(2), torch::tensor({1.0f, 2.0f}).view({1, 1, 2}),
      torch::tensor({0.5f, -3.0f}).view({1, 1, 2}), torch::tensor({0.1f, -0.2f}));

  auto result = conv->forward_with_attention(tiny_x(), tiny_edges());

  // Target 0: sources 1 (2 + 0.5) and 0 (1 + 0.5).
  const double e10 = leaky(2.5), e00 = leaky(1.5);
  const double z0 = std::exp(e10) + std::exp(e00);
  const double a10 = std::exp(e10) / z0, a00 = std::exp(e00) / z0;
  // Target 1: sources 0 (1 - 3), 2 (3 - 3), 1 (2 - 3).
  const double e01 = leaky(-2.0), e21 = leaky(0.0), e11 = leaky(-1.0);
  const double z1 = std::exp(e01) + std::exp(e21) + std::exp(e11);
  const double a01 = std::exp(e01) / z1, a21 = std::exp(e21) / z1, a11 = std::exp(e11) / z1;
  // Target 2: sources 0 (1 - 2.5), 2 (3 - 2.5).
  const double e02 = leaky(-1.5), e22 = leaky(0.5);
  const double z2 = std::exp(e02) + std::exp(e22);
  const double a02 = std::exp(e02) / z2, a22 = std::exp(e22) / z2;

  const std::array<std::array<double, 2>, 3> expected = {{
      {a10 * 0 + a00 * 1 + 0.1, a10 * 1 + a00 * 0 - 0.2},
      {a01 * 1 + a21 * 1 + a11 * 0 + 0.1, a01 * 0 + a21 * 1 + a11 * 1 - 0.2},
      {a02 * 1 + a22 * 1 + 0.1, a02 * 0 + a22 * 1 - 0.2},
  }};
  ASSERT_EQ(result.out.sizes(), (std::vector<std::int64_t>{3, 2}));
  for (std::int64_t n = 0; n < 3; ++n) {
    for (std::int64_t c = 0; c < 2; ++c) {
      EXPECT_NEAR(result.out[n][c].item<double>(), expected[n][c], 1e-5) << n << "," << c;
    }
  }

  std::map<std::pair<std::int64_t, std::int64_t>, double> expected_attention = {
      {{1, 0}, a10}, {{0, 0}, a00}, {{0, 1}, a01}, {{2, 1}, a21},
      {{1, 1}, a11}, {{0, 2}, a02}, {{2, 2}, a22}};
  ASSERT_EQ(result.attention_edges.size(1), 7);
  ASSERT_EQ(result.attention.sizes(), (std::vector<std::int64_t>{7, 1}));
  for (std::int64_t e = 0; e < 7; ++e) {
    auto key = std::make_pair(result.attention_edges[0][e].item<std::int64_t>(),
                              result.attention_edges[1][e].item<std::int64_t>());
    ASSERT_TRUE(expected_attention.count(key)) << key.first << "->" << key.second;
    EXPECT_NEAR(result.attention[e][0].item<double>(), expected_attention[key], 1e-6);
  }
}

// A straightforward per-node reference with explicit loops over hand-written neighbour lists.
std::vector<std::vector<double>> reference(const std::vector<std::vector<double>>& x,
                                           const std::vector<std::vector<std::int64_t>>& sources,
                                           const std::vector<std::vector<double>>& weight,
                                           const std::vector<std::vector<double>>& att_src,
                                           const std::vector<std::vector<double>>& att_dst,
                                           const std::vector<double>& bias, std::size_t heads,
                                           std::size_t channels, bool concat) {
  const auto nodes = x.size();
  // h[n][k][c] = sum_i W[k*C + c][i] x[n][i]
  std::vector<std::vector<std::vector<double>>> h(
      nodes, std::vector<std::vector<double>>(heads, std::vector<double>(channels, 0.0)));
  for (std::size_t n = 0; n < nodes; ++n)
    for (std::size_t k = 0; k < heads; ++k)
      for (std::size_t c = 0; c < channels; ++c)
        for (std::size_t i = 0; i < x[n].size(); ++i)
          h[n][k][c] += weight[k * channels + c][i] * x[n][i];
  std::vector<std::vector<double>> out(nodes);
  for (std::size_t target = 0; target < nodes; ++target) {
    std::vector<std::vector<double>> per_head(heads, std::vector<double>(channels, 0.0));
    for (std::size_t k = 0; k < heads; ++k) {
      double dst = 0;
      for (std::size_t c = 0; c < channels; ++c) dst += att_dst[k][c] * h[target][k][c];
      std::vector<double> scores;
      for (auto source : sources[target]) {
        double src = 0;
        for (std::size_t c = 0; c < channels; ++c)
          src += att_src[k][c] * h[static_cast<std::size_t>(source)][k][c];
        scores.push_back(std::exp(leaky(src + dst)));
      }
      double total = 0;
      for (double s : scores) total += s;
      for (std::size_t j = 0; j < scores.size(); ++j)
        for (std::size_t c = 0; c < channels; ++c)
          per_head[k][c] +=
              scores[j] / total * h[static_cast<std::size_t>(sources[target][j])][k][c];
    }
    if (concat) {
      for (std::size_t k = 0; k < heads; ++k)
        for (std::size_t c = 0; c < channels; ++c) out[target].push_back(per_head[k][c]);
    } else {
      for (std::size_t c = 0; c < channels; ++c) {
        double sum = 0;
        for (std::size_t k = 0; k < heads; ++k) sum += per_head[k][c];
        out[target].push_back(sum / static_cast<double>(heads));
      }
    }
    for (std::size_t c = 0; c < out[target].size(); ++c) out[target][c] += bias[c];
  }
  return out;
}

at::Tensor to_tensor(const std::vector<std::vector<double>>& rows) {
  std::vector<float> flat;
  for (const auto& row : rows)
    for (double v : row) flat.push_back(static_cast<float>(v));
  return torch::tensor(flat).view(
      {static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(rows[0].size())});
}

void check_two_heads(bool concat) {
  const std::vector<std::vector<double>> x = {{1.0, 0.0}, {0.0, 1.0}, {1.0, 1.0}};
  // Two heads of two channels: rows 0-1 head 0, rows 2-3 head 1.
  const std::vector<std::vector<double>> weight = {
      {0.5, -0.3}, {0.2, 0.4}, {-0.6, 0.1}, {0.3, 0.7}};
  const std::vector<std::vector<double>> att_src = {{0.4, -0.2}, {0.9, 0.5}};
  const std::vector<std::vector<double>> att_dst = {{-0.7, 0.3}, {0.2, -1.1}};
  const std::vector<double> bias =
      concat ? std::vector<double>{0.01, 0.02, 0.03, 0.04} : std::vector<double>{0.05, -0.05};
  // Incoming sources per target after the self-loop rewrite (the order does not matter).
  const std::vector<std::vector<std::int64_t>> sources = {{1, 0}, {0, 2, 1}, {0, 2}};

  GATConvOptions options;
  options.in_channels = 2;
  options.out_channels = 2;
  options.heads = 2;
  options.concat = concat;
  GATConv conv(options);
  set(conv, to_tensor(weight), to_tensor(att_src).view({1, 2, 2}),
      to_tensor(att_dst).view({1, 2, 2}), to_tensor({bias}).view(-1));
  auto out = conv->forward(tiny_x(), tiny_edges());
  auto expected = reference(x, sources, weight, att_src, att_dst, bias, 2, 2, concat);
  ASSERT_EQ(out.size(0), 3);
  ASSERT_EQ(out.size(1), concat ? 4 : 2);
  for (std::int64_t n = 0; n < 3; ++n)
    for (std::int64_t c = 0; c < out.size(1); ++c)
      EXPECT_NEAR(out[n][c].item<double>(),
                  expected[static_cast<std::size_t>(n)][static_cast<std::size_t>(c)], 1e-5);
}

TEST(GATConvTest, TwoHeadsConcatMatchesReference) { check_two_heads(true); }
TEST(GATConvTest, TwoHeadsMeanMatchesReference) { check_two_heads(false); }

TEST(GATConvTest, ExistingSelfLoopsAreReplacedNotDoubled) {
  GATConvOptions options;
  options.in_channels = 2;
  options.out_channels = 3;
  options.heads = 2;
  GATConv conv(options);
  // Node 1 has two self-loops already, node 2 one.
  auto result =
      conv->forward_with_attention(tiny_x(), edges({{0, 1}, {1, 1}, {1, 1}, {2, 2}, {0, 2}}));
  const auto& e = result.attention_edges;
  ASSERT_EQ(e.size(1), 2 + 3);
  for (std::int64_t node = 0; node < 3; ++node) {
    auto loops = ((e[0] == node) & (e[1] == node)).sum().item<std::int64_t>();
    EXPECT_EQ(loops, 1) << "node " << node;
  }
  EXPECT_EQ(((e[0] == 0) & (e[1] == 1)).sum().item<std::int64_t>(), 1);
  EXPECT_EQ(((e[0] == 0) & (e[1] == 2)).sum().item<std::int64_t>(), 1);
}

TEST(GATConvTest, WithoutSelfLoopInsertionEdgesAreKept) {
  GATConvOptions options;
  options.in_channels = 2;
  options.out_channels = 2;
  options.add_self_loops = false;
  GATConv conv(options);
  auto input = tiny_edges();
  auto result = conv->forward_with_attention(tiny_x(), input);
  EXPECT_TRUE(torch::equal(result.attention_edges, input));
}

TEST(GATConvTest, AttentionSumsToOnePerTarget) {
  torch::manual_seed(3);
  GATConvOptions options;
  options.in_channels = 5;
  options.out_channels = 4;
  options.heads = 3;
  GATConv conv(options);
  const std::int64_t nodes = 20;
  auto edge_index = torch::randint(0, nodes, {2, 60}, torch::kLong);
  auto result = conv->forward_with_attention(torch::randn({nodes, 5}), edge_index);
  auto target = result.attention_edges[1];
  for (std::int64_t node = 0; node < nodes; ++node) {
    auto rows = result.attention.index({target == node});
    auto sums = rows.sum(0);
    for (std::int64_t k = 0; k < 3; ++k) EXPECT_NEAR(sums[k].item<double>(), 1.0, 1e-5);
  }
}

TEST(GATConvTest, AttentionDropoutOnlyInTraining) {
  torch::manual_seed(4);
  GATConvOptions options;
  options.in_channels = 3;
  options.out_channels = 2;
  options.dropout = 0.5;
  GATConv conv(options);
  auto x = torch::randn({30, 3});
  auto edge_index = torch::randint(0, 30, {2, 200}, torch::kLong);
  conv->eval();
  auto a = conv->forward_with_attention(x, edge_index).attention;
  auto b = conv->forward_with_attention(x, edge_index).attention;
  EXPECT_TRUE(torch::equal(a, b));
  EXPECT_EQ((a == 0).sum().item<std::int64_t>(), 0);
  conv->train();
  auto dropped = conv->forward_with_attention(x, edge_index).attention;
  EXPECT_GT((dropped == 0).sum().item<std::int64_t>(), 0);
}

TEST(GATConvTest, GlorotInitialisationBounds) {
  torch::manual_seed(5);
  GATConvOptions options;
  options.in_channels = 26;
  options.out_channels = 48;
  options.heads = 8;
  GATConv conv(options);
  const double weight_bound = std::sqrt(6.0 / (26.0 + 8.0 * 48.0));
  const double att_bound = std::sqrt(6.0 / (8.0 + 48.0));
  EXPECT_LE(conv->weight.abs().max().item<double>(), weight_bound);
  EXPECT_GT(conv->weight.abs().max().item<double>(), 0.9 * weight_bound);
  EXPECT_LE(conv->att_src.abs().max().item<double>(), att_bound);
  EXPECT_GT(conv->att_dst.abs().max().item<double>(), 0.8 * att_bound);
  EXPECT_EQ(conv->bias_.abs().sum().item<double>(), 0.0);
  EXPECT_EQ(conv->named_parameters().size(), 4u);
}

TEST(GATConvTest, AutocastBFloat16KeepsOneDtype) {
  torch::manual_seed(6);
  GATConvOptions options;
  options.in_channels = 6;
  options.out_channels = 4;
  options.heads = 2;
  GATConv conv(options);
  auto x = torch::randn({12, 6});
  auto edge_index = torch::randint(0, 12, {2, 40}, torch::kLong);
  auto full = conv->forward(x, edge_index);
  at::Tensor mixed;
  {
    at::autocast::set_autocast_enabled(at::kCPU, true);
    at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
    mixed = conv->forward(x, edge_index);
    at::autocast::set_autocast_enabled(at::kCPU, false);
    at::autocast::clear_cache();
  }
  EXPECT_EQ(mixed.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(torch::allclose(mixed.to(torch::kFloat), full, 0.05, 0.05));
  mixed.to(torch::kFloat).sum().backward();
  EXPECT_TRUE(conv->weight.grad().defined());
}

}  // namespace
}  // namespace headroom::nn
