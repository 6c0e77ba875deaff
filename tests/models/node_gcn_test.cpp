// TextGCN's node model: the first layer's product kept from an evaluation pass is reused by the
// next training forward only while it is still Â · W1.
#include "headroom/models/node_gcn.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace headroom::models {
namespace {

// A symmetric adjacency over a ring of `n` nodes with self-loops, weights 1/3.
nn::SparseAdjacency ring(std::int64_t n) {
  std::vector<std::int64_t> offsets = {0};
  std::vector<std::int32_t> columns;
  for (std::int64_t i = 0; i < n; ++i) {
    std::vector<std::int32_t> row = {static_cast<std::int32_t>((i + n - 1) % n),
                                     static_cast<std::int32_t>(i),
                                     static_cast<std::int32_t>((i + 1) % n)};
    std::sort(row.begin(), row.end());
    columns.insert(columns.end(), row.begin(), row.end());
    offsets.push_back(static_cast<std::int64_t>(columns.size()));
  }
  return nn::SparseAdjacency(torch::tensor(offsets).to(torch::kInt64),
                             torch::tensor(columns).to(torch::kInt32),
                             torch::full({static_cast<std::int64_t>(columns.size())}, 1.0F / 3),
                             /*symmetric=*/true);
}

// Loss of a training forward and W1's gradient, dropout off so that passes compare exactly.
std::pair<at::Tensor, at::Tensor> training_pass(NodeGcn& model, const nn::SparseAdjacency& a) {
  model->train();
  model->zero_grad();
  const auto loss = model->forward(a).pow(2).sum();
  loss.backward();
  return {loss.detach(), model->identity_weight.grad().clone()};
}

void evaluation_pass(NodeGcn& model, const nn::SparseAdjacency& a) {
  model->eval();
  const torch::NoGradGuard no_grad;
  model->forward(a);
}

TEST(NodeGcn, ATrainingForwardAfterAnEvaluationPassGivesTheSameLossAndGradient) {
  const auto a = ring(12);
  torch::manual_seed(3);
  NodeGcn model(NodeModelConfig{.num_nodes = 12, .hidden = 5, .num_classes = 3, .dropout = 0.0});
  const auto [fresh_loss, fresh_grad] = training_pass(model, a);
  evaluation_pass(model, a);
  const auto [reused_loss, reused_grad] = training_pass(model, a);
  EXPECT_TRUE(torch::equal(fresh_loss, reused_loss));
  EXPECT_TRUE(torch::equal(fresh_grad, reused_grad));
}

TEST(NodeGcn, AKeptProductIsNotReusedOnceTheWeightsChange) {
  const auto a = ring(12);
  torch::manual_seed(4);
  NodeGcn model(NodeModelConfig{.num_nodes = 12, .hidden = 5, .num_classes = 3, .dropout = 0.0});
  evaluation_pass(model, a);
  {
    const torch::NoGradGuard no_grad;
    model->identity_weight.mul_(2.0);  // what an optimiser step does: in place
  }
  const auto [after_step, grad] = training_pass(model, a);
  NodeGcn reference(NodeModelConfig{.num_nodes = 12, .hidden = 5, .num_classes = 3, .dropout = 0.0});
  {
    const torch::NoGradGuard no_grad;
    reference->identity_weight.copy_(model->identity_weight);
    reference->output_weight.copy_(model->output_weight);
  }
  const auto [expected, expected_grad] = training_pass(reference, a);
  EXPECT_TRUE(torch::equal(after_step, expected));
  EXPECT_TRUE(torch::equal(grad, expected_grad));
}

}  // namespace
}  // namespace headroom::models
