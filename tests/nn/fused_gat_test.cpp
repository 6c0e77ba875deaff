#include "headroom/nn/fused_gat.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "headroom/nn/attention_graph.hpp"
#include "headroom/nn/gat_conv.hpp"

namespace headroom::nn {
namespace {

// max |actual - expected| / max |expected|: the relative error the fused kernel is held to.
double relative_error(const at::Tensor& actual, const at::Tensor& expected) {
  auto a = actual.to(torch::kCPU, torch::kDouble);
  auto e = expected.to(torch::kCPU, torch::kDouble);
  const double scale = std::max(e.abs().max().item<double>(), 1e-12);
  return (a - e).abs().max().item<double>() / scale;
}

// Random edges among the first nodes only (the last ones stay isolated), with repeated edges
// (multi-edges) and explicit self loops that the convolution must replace by its own.
at::Tensor random_edges(std::int64_t num_nodes, std::int64_t num_edges, std::int64_t isolated) {
  const auto connected = num_nodes - isolated;
  auto source = torch::randint(connected, {num_edges}, torch::kLong);
  auto target = torch::randint(connected, {num_edges}, torch::kLong);
  auto some = torch::randint(connected, {num_edges / 8 + 1}, torch::kLong);
  auto repeated =
      torch::stack({source.slice(0, 0, num_edges / 4), target.slice(0, 0, num_edges / 4)});
  auto loops = torch::stack({some, some});
  return torch::cat({torch::stack({source, target}), repeated, loops}, 1);
}

GATConvOptions options(std::int64_t heads, std::int64_t channels, bool concat, bool fused) {
  GATConvOptions o;
  o.in_channels = 12;
  o.out_channels = channels;
  o.heads = heads;
  o.concat = concat;
  o.fused = fused;
  return o;
}

// A fused and a reference convolution with the same parameters.
std::pair<GATConv, GATConv> twin_convs(std::int64_t heads, std::int64_t channels, bool concat) {
  GATConv fused(options(heads, channels, concat, true));
  GATConv reference(options(heads, channels, concat, false));
  torch::NoGradGuard no_grad;
  for (auto& item : reference->named_parameters()) {
    auto& param = item.value();
    param.copy_(fused->named_parameters()[item.key()]);
    param.add_(0.1 * torch::randn_like(param));  // non-zero bias, and off the Glorot draw
    fused->named_parameters()[item.key()].copy_(param);
  }
  return {fused, reference};
}

struct Gradients {
  at::Tensor out;
  at::Tensor x;
  std::vector<at::Tensor> params;
};

Gradients run(GATConv& conv, const at::Tensor& x_in, const at::Tensor& edges,
              const at::Tensor& upstream) {
  conv->zero_grad();
  auto x = x_in.detach().clone().requires_grad_(true);
  auto out = conv->forward(x, edges);
  (out * upstream).sum().backward();
  Gradients result{out.detach(), x.grad(), {}};
  for (auto& param : conv->parameters()) result.params.push_back(param.grad().clone());
  return result;
}

// The fused convolution on `device` in `dtype` against the reference formulation on CPU in the
// same dtype (PyG's tensors; CPU, where it has no kernel of ours).
void expect_same_training_signal(const torch::Device& device, at::ScalarType dtype,
                                 double tolerance, bool concat) {
  torch::manual_seed(7);
  auto [fused, reference] = twin_convs(4, 5, concat);
  const std::int64_t nodes = 61;
  auto edges = random_edges(nodes, 240, 5);
  auto x = torch::randn({nodes, 12});
  auto upstream = torch::randn({nodes, fused->output_channels()});
  reference->to(dtype);
  auto expected = run(reference, x.to(dtype), edges, upstream.to(dtype));

  fused->to(device, dtype);
  auto actual = run(fused, x.to(device, dtype), edges.to(device), upstream.to(device, dtype));
  EXPECT_LE(relative_error(actual.out, expected.out), tolerance) << "forward";
  EXPECT_LE(relative_error(actual.x, expected.x), tolerance) << "input gradient";
  const auto names = reference->named_parameters().keys();
  for (std::size_t i = 0; i < expected.params.size(); ++i) {
    EXPECT_LE(relative_error(actual.params[i], expected.params[i]), tolerance) << names[i];
  }
}

TEST(FusedGatTest, MatchesReferenceForwardAndGradientsFp32Cpu) {
  expect_same_training_signal(torch::kCPU, torch::kFloat, 1e-5, /*concat=*/true);
  expect_same_training_signal(torch::kCPU, torch::kFloat, 1e-5, /*concat=*/false);
}

TEST(FusedGatTest, MatchesReferenceInReducedPrecisionCpu) {
  expect_same_training_signal(torch::kCPU, torch::kBFloat16, 1e-2, true);
  expect_same_training_signal(torch::kCPU, torch::kHalf, 1e-2, true);
}

TEST(FusedGatTest, AttentionEqualsReferenceCoefficients) {
  torch::manual_seed(3);
  auto [fused, reference] = twin_convs(3, 4, true);
  const std::int64_t nodes = 40;
  auto edges = random_edges(nodes, 150, 4);
  auto x = torch::randn({nodes, 12});
  torch::NoGradGuard no_grad;
  auto expected = reference->forward_with_attention(x, edges);

  auto h = torch::nn::functional::linear(x, fused->weight).view({nodes, 3, 4});
  auto graph = build_attention_graph(edges, nodes);
  auto result = fused_gat_attention(h, (h * fused->att_src).sum(-1), (h * fused->att_dst).sum(-1),
                                    graph, 0.2);
  // Back to PyG's layout: kept input edges in input order, then one loop per node.
  const auto num_edges = edges.size(1);
  auto by_input = torch::empty({num_edges, 3});
  by_input.index_put_({graph.target_order}, result.attention.slice(0, 0, num_edges));
  auto kept = (edges[0] != edges[1]).nonzero().view(-1);
  auto pyg_layout =
      torch::cat({by_input.index_select(0, kept), result.attention.slice(0, num_edges)});
  EXPECT_LE(relative_error(pyg_layout, expected.attention), 1e-5);
  // Explicit self-loop edges carry no weight of their own.
  auto loops = (edges[0] == edges[1]).nonzero().view(-1);
  EXPECT_EQ(by_input.index_select(0, loops).abs().sum().item<float>(), 0.0f);
}

// Central differences in double: the hand-written backward against the forward itself.
TEST(FusedGatTest, GradientsMatchFiniteDifferencesInDouble) {
  torch::manual_seed(11);
  const std::int64_t nodes = 9, heads = 2, channels = 3;
  auto edges = random_edges(nodes, 20, 2);
  auto graph = build_attention_graph(edges, nodes);
  auto options = torch::TensorOptions().dtype(torch::kDouble);
  auto h = torch::randn({nodes, heads, channels}, options).requires_grad_(true);
  auto src = torch::randn({nodes, heads}, options).requires_grad_(true);
  auto dst = torch::randn({nodes, heads}, options).requires_grad_(true);
  auto upstream = torch::randn({nodes, heads, channels}, options);
  auto scale = attention_dropout_scale(graph, heads, 0.3, torch::kDouble);
  auto loss = [&] {
    return (fused_gat_attention(h, src, dst, graph, 0.2, scale).out * upstream).sum();
  };
  loss().backward();
  const double step = 1e-6;
  for (auto* input : {&h, &src, &dst}) {
    auto analytic = input->grad().clone();
    auto flat = input->data().view(-1);
    for (std::int64_t i = 0; i < flat.size(0); ++i) {
      torch::NoGradGuard no_grad;
      const double original = flat[i].item<double>();
      flat[i] = original + step;
      const double up = loss().item<double>();
      flat[i] = original - step;
      const double down = loss().item<double>();
      flat[i] = original;
      EXPECT_NEAR(analytic.view(-1)[i].item<double>(), (up - down) / (2 * step), 1e-6) << i;
    }
  }
}

// Dropout multiplies each attention value after the softmax, as PyG's attention dropout does.
TEST(FusedGatTest, DropoutScalesAttentionAfterSoftmax) {
  torch::manual_seed(5);
  const std::int64_t nodes = 20, heads = 2, channels = 3;
  auto edges = random_edges(nodes, 60, 3);
  auto graph = build_attention_graph(edges, nodes);
  auto h = torch::randn({nodes, heads, channels});
  auto src = torch::randn({nodes, heads});
  auto dst = torch::randn({nodes, heads});
  auto scale = attention_dropout_scale(graph, heads, 0.5, torch::kFloat);
  const auto kept_fraction = (scale > 0).to(torch::kFloat).mean().item<float>();
  EXPECT_GT(kept_fraction, 0.3f);
  EXPECT_LT(kept_fraction, 0.7f);
  EXPECT_TRUE(((scale == 0) | (scale == 2.0f)).all().item<bool>());

  auto plain = fused_gat_attention(h, src, dst, graph, 0.2);
  auto dropped = fused_gat_attention(h, src, dst, graph, 0.2, scale);
  EXPECT_TRUE(torch::allclose(plain.attention, dropped.attention)) << "softmax before dropout";
  // out_i = sum over i's rows of attention * scale * h[source]
  auto weights = plain.attention * scale;
  auto sources = torch::cat({graph.source_by_target, torch::arange(nodes)});
  auto targets = torch::cat({edges[1].index_select(0, graph.target_order), torch::arange(nodes)});
  auto messages = h.index_select(0, sources) * weights.unsqueeze(-1);
  auto expected = torch::zeros_like(h).index_add_(0, targets, messages);
  EXPECT_LE(relative_error(dropped.out, expected), 1e-5);
}

TEST(FusedGatTest, EdgelessGraphAttendsToSelfOnly) {
  auto edges = torch::empty({2, 0}, torch::kLong);
  auto graph = build_attention_graph(edges, 4);
  auto h = torch::randn({4, 2, 3});
  auto result = fused_gat_attention(h, torch::randn({4, 2}), torch::randn({4, 2}), graph, 0.2);
  EXPECT_TRUE(torch::allclose(result.out, h));
  EXPECT_TRUE(torch::allclose(result.attention, torch::ones({4, 2})));
  auto none = build_attention_graph(edges, 0);
  EXPECT_EQ(fused_gat_attention(torch::empty({0, 2, 3}), torch::empty({0, 2}), torch::empty({0, 2}),
                                none, 0.2)
                .out.numel(),
            0);
}

TEST(FusedGatTest, RejectsMismatchedInputs) {
  auto graph = build_attention_graph(torch::tensor({0, 1, 1, 0}, torch::kLong).view({2, 2}), 2);
  EXPECT_THROW(fused_gat_attention(torch::randn({3, 2, 3}), torch::randn({3, 2}),
                                   torch::randn({3, 2}), graph, 0.2),
               c10::Error);
  EXPECT_THROW(fused_gat_attention(torch::randn({2, 2, 3}), torch::randn({2, 2}, torch::kDouble),
                                   torch::randn({2, 2}), graph, 0.2),
               c10::Error);
  EXPECT_THROW(build_attention_graph(torch::tensor({0, 5}, torch::kLong).view({2, 1}), 2),
               c10::Error);
}

// --- CUDA: runs wherever a device is present, skips cleanly elsewhere ------------------------

bool cuda_kernels() {
  return torch::cuda::is_available() && fused_gat_supported(torch::Device(torch::kCUDA, 0));
}

TEST(FusedGatCudaTest, MatchesCpuReferenceFp32) {
  if (!cuda_kernels()) GTEST_SKIP() << "no CUDA device, or built without the CUDA kernels";
  expect_same_training_signal(torch::kCUDA, torch::kFloat, 1e-5, true);
  expect_same_training_signal(torch::kCUDA, torch::kFloat, 1e-5, false);
}

TEST(FusedGatCudaTest, MatchesCpuReferenceInReducedPrecision) {
  if (!cuda_kernels()) GTEST_SKIP() << "no CUDA device, or built without the CUDA kernels";
  expect_same_training_signal(torch::kCUDA, torch::kBFloat16, 1e-2, true);
  expect_same_training_signal(torch::kCUDA, torch::kHalf, 1e-2, true);
}

TEST(FusedGatCudaTest, DoubleGradientsEqualCpuKernel) {
  if (!cuda_kernels()) GTEST_SKIP() << "no CUDA device, or built without the CUDA kernels";
  torch::manual_seed(13);
  const std::int64_t nodes = 300, heads = 4, channels = 40;  // channels > one warp of lanes
  auto edges = random_edges(nodes, 2000, 10);
  auto options = torch::TensorOptions().dtype(torch::kDouble);
  auto inputs = std::vector<at::Tensor>{torch::randn({nodes, heads, channels}, options),
                                        torch::randn({nodes, heads}, options),
                                        torch::randn({nodes, heads}, options)};
  auto upstream = torch::randn({nodes, heads, channels}, options);
  auto evaluate = [&](const torch::Device& device) {
    std::vector<at::Tensor> leaves;
    // Fresh leaves per device: `to` of a tensor already on `device` returns the tensor itself, so
    // without detach the CPU pass would make the inputs leaves and the CUDA copies non-leaves.
    for (auto& t : inputs) leaves.push_back(t.to(device).detach().requires_grad_(true));
    auto graph = build_attention_graph(edges.to(device), nodes);
    auto result = fused_gat_attention(leaves[0], leaves[1], leaves[2], graph, 0.2);
    (result.out * upstream.to(device)).sum().backward();
    return std::vector<at::Tensor>{result.out, result.attention, leaves[0].grad(), leaves[1].grad(),
                                   leaves[2].grad()};
  };
  auto cpu = evaluate(torch::kCPU);
  auto cuda = evaluate(torch::kCUDA);
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    EXPECT_LE(relative_error(cuda[i], cpu[i]), 1e-12) << "output " << i;
  }
}

}  // namespace
}  // namespace headroom::nn
