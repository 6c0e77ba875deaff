// The node task's SGC: its logits are (Â dense)^K · W computed independently with dense matrices,
// its sampled and blocked passes give the same, and the node model registry builds every model
// it lists with the parameters its kind counts, and refuses a name it does not list.
#include "headroom/models/node_sgc.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/models/node_model_kind.hpp"

namespace headroom::models {
namespace {

// A random symmetric weighted adjacency over `n` nodes with self-loops, as a dense matrix: each
// pair is linked with probability 0.3, its weight drawn once for both directions.
at::Tensor dense_symmetric_adjacency(std::int64_t n, std::uint64_t seed) {
  torch::manual_seed(seed);
  const auto weights = torch::rand({n, n}) + 0.1;
  const auto linked = torch::rand({n, n}) < 0.3;
  auto upper = torch::triu(weights * linked, /*diagonal=*/1);
  return upper + upper.t() + torch::diag(torch::rand({n}) + 0.1);
}

// The same matrix as CSR.
nn::SparseAdjacency sparse_of(const at::Tensor& dense) {
  const auto n = dense.size(0);
  std::vector<std::int64_t> offsets = {0};
  std::vector<std::int32_t> columns;
  std::vector<float> weights;
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const auto weight = dense[i][j].item<float>();
      if (weight == 0) continue;
      columns.push_back(static_cast<std::int32_t>(j));
      weights.push_back(weight);
    }
    offsets.push_back(static_cast<std::int64_t>(columns.size()));
  }
  return nn::SparseAdjacency(torch::tensor(offsets, torch::kInt64),
                             torch::tensor(columns, torch::kInt32), torch::tensor(weights),
                             /*symmetric=*/true);
}

NodeModelConfig sgc_config(std::int64_t nodes, std::int64_t steps) {
  NodeModelOverrides given;
  given.layers = steps;
  return node_model_kind("sgc").configure(nodes, /*num_classes=*/4, given);
}

TEST(NodeSgc, LogitsAreTheDenseAdjacencyToTheKTimesTheWeight) {
  constexpr std::int64_t kNodes = 17;
  const auto dense = dense_symmetric_adjacency(kNodes, 5);
  const auto adjacency = sparse_of(dense);
  for (const std::int64_t steps : {1, 2, 3}) {
    NodeSgc model(sgc_config(kNodes, steps));
    const auto expected =
        torch::mm(torch::matrix_power(dense, steps), model->identity_weight.detach());
    EXPECT_TRUE(torch::allclose(model->forward(adjacency), expected, 1e-5, 1e-6))
        << "K = " << steps;
  }
}

TEST(NodeSgc, GradientIsTheDenseAdjacencyToTheKTimesTheLossGradient) {
  // d(sum(G ⊙ Â^K W))/dW = (Â^K)ᵀ G = Â^K G for a symmetric Â.
  constexpr std::int64_t kNodes = 11;
  const auto dense = dense_symmetric_adjacency(kNodes, 9);
  NodeSgc model(sgc_config(kNodes, 2));
  const auto upstream = torch::randn({kNodes, 4});
  (model->forward(sparse_of(dense)) * upstream).sum().backward();
  const auto expected = torch::mm(torch::mm(dense, dense).t(), upstream);
  EXPECT_TRUE(torch::allclose(model->identity_weight.grad(), expected, 1e-5, 1e-6));
}

TEST(NodeSgc, ASubgraphForwardIsTheDenseSubgraphToTheKTimesItsWeightRows) {
  constexpr std::int64_t kNodes = 15;
  const auto dense = dense_symmetric_adjacency(kNodes, 11);
  const auto ids = torch::tensor(std::vector<std::int64_t>{2, 3, 7, 8, 12, 14}, torch::kInt64);
  const auto induced = dense.index_select(0, ids).index_select(1, ids);
  NodeSgc model(sgc_config(kNodes, 2));
  const auto expected =
      torch::mm(torch::mm(induced, induced), model->identity_weight.detach().index_select(0, ids));
  EXPECT_TRUE(torch::allclose(model->forward_on(sparse_of(induced), ids), expected, 1e-5, 1e-6));
  EXPECT_THROW(model->forward_on(sparse_of(induced), ids.narrow(0, 0, 3)), std::invalid_argument);
}

TEST(NodeSgc, BlockedAndListedInferenceGiveTheWholeForward) {
  constexpr std::int64_t kNodes = 23;
  const auto adjacency = sparse_of(dense_symmetric_adjacency(kNodes, 13));
  NodeSgc model(sgc_config(kNodes, 3));
  const torch::NoGradGuard no_grad;
  const auto whole = model->forward(adjacency);
  const InferenceBlocks blocks{.rows = 4};  // 23 rows: six blocks, the last of 3
  EXPECT_TRUE(torch::allclose(model->infer_by_row_blocks(adjacency, blocks), whole, 1e-5, 1e-6));
  const auto rows = torch::tensor(std::vector<std::int64_t>{19, 0, 5, 5, 22}, torch::kInt64);
  EXPECT_TRUE(torch::allclose(model->infer_rows(adjacency, rows, blocks),
                              whole.index_select(0, rows), 1e-5, 1e-6));
  EXPECT_THROW(model->infer_by_row_blocks(adjacency, {.rows = 0}), std::invalid_argument);
}

TEST(NodeModelRegistry, RefusesAnUnknownNameListingTheKnownOnes) {
  try {
    node_model_kind("mlp");
    FAIL() << "an unknown node model was accepted";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("'mlp'"), std::string::npos) << message;
    for (const auto name : node_model_names())
      EXPECT_NE(message.find(std::string(name)), std::string::npos) << message;
  }
  const auto names = node_model_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "sgc"), names.end());
  EXPECT_EQ(names.front(), "gcn");  // the node task's default leads --help's list
}

// Every registered model builds from its own default configuration, names itself, and has as
// many parameters as its kind counts without building it (what the budget checks read).
TEST(NodeModelRegistry, EveryKindBuildsItsDefaultWithTheParametersItCounts) {
  for (const auto name : node_model_names()) {
    const auto& kind = node_model_kind(name);
    const auto config = kind.configure(/*num_nodes=*/30, /*num_classes=*/5, {});
    EXPECT_EQ(config.architecture, name);
    const auto model = make_node_model(config);
    std::int64_t parameters = 0;
    for (const auto& parameter : model->parameters()) parameters += parameter.numel();
    EXPECT_EQ(parameters, config.parameter_count()) << name;
    EXPECT_EQ(model->config().architecture, name);
  }
}

TEST(NodeModelRegistry, AnSgcConfigurationRoundTripsThroughJson) {
  const auto config = sgc_config(40, 3);
  const nlohmann::json json = config;
  EXPECT_EQ(json["architecture"], "sgc");
  const auto read = json.get<NodeModelConfig>();
  EXPECT_EQ(read.architecture, "sgc");
  EXPECT_EQ(read.layers, 3);
  EXPECT_EQ(read.num_classes, 4);
  EXPECT_EQ(read.parameter_count(), 40 * 4);
  // What SGC cannot be: a hidden layer, heads or dropout.
  auto with_dropout = config;
  with_dropout.dropout = 0.5;
  EXPECT_THROW(with_dropout.validate(), std::invalid_argument);
  auto with_heads = config;
  with_heads.heads = 2;
  EXPECT_THROW(make_node_model(with_heads), std::invalid_argument);
}

}  // namespace
}  // namespace headroom::models
