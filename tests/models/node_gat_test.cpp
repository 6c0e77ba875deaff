// The node task's GAT: its identity input is exactly a GATConv over the identity matrix, its
// sampled and blocked passes give the whole graph's forward, and node model configurations read
// and build the architecture they name.
#include "headroom/models/node_gat.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/models/node_gcn.hpp"

namespace headroom::models {
namespace {

// A symmetric adjacency with self-loops over `n` nodes: a ring plus chords between i and
// 3i + 1 (mod n), so that degrees differ. Weights arbitrary (the GAT does not read them).
nn::SparseAdjacency irregular_graph(std::int64_t n) {
  std::vector<std::set<std::int32_t>> rows(static_cast<std::size_t>(n));
  const auto link = [&rows](std::int64_t a, std::int64_t b) {
    rows[static_cast<std::size_t>(a)].insert(static_cast<std::int32_t>(b));
    rows[static_cast<std::size_t>(b)].insert(static_cast<std::int32_t>(a));
  };
  for (std::int64_t i = 0; i < n; ++i) {
    link(i, i);
    link(i, (i + 1) % n);
    if (i % 2 == 0) link(i, (3 * i + 1) % n);
  }
  std::vector<std::int64_t> offsets = {0};
  std::vector<std::int32_t> columns;
  for (const auto& row : rows) {
    columns.insert(columns.end(), row.begin(), row.end());
    offsets.push_back(static_cast<std::int64_t>(columns.size()));
  }
  const auto entries = static_cast<std::int64_t>(columns.size());
  return nn::SparseAdjacency(torch::tensor(offsets, torch::kInt64),
                             torch::tensor(columns, torch::kInt32), torch::rand({entries}) + 0.5,
                             /*symmetric=*/true);
}

NodeModelConfig gat_config(std::int64_t nodes) {
  return {.num_nodes = nodes,
          .hidden = 3,
          .num_classes = 4,
          .dropout = 0.5,
          .architecture = "gat",
          .heads = 2};
}

// The biases start at zero; random ones make the comparisons below read them.
void randomise_biases(NodeGatImpl& model) {
  const torch::NoGradGuard no_grad;
  model.hidden_bias.normal_();
  model.output->bias_.normal_();
}

TEST(NodeGat, TheIdentityInputIsAGatConvOverTheIdentityMatrix) {
  constexpr std::int64_t n = 17;
  torch::manual_seed(5);
  const auto adjacency = irregular_graph(n);
  NodeGat model(gat_config(n));
  randomise_biases(*model);
  model->eval();
  const torch::NoGradGuard no_grad;

  // The textbook layer: X = I (N × N), weight W1ᵀ, the same attention vectors and bias.
  const auto& config = model->config();
  nn::GATConv first(
      nn::GATConvOptions{.in_channels = n, .out_channels = config.hidden, .heads = config.heads});
  first->eval();
  first->weight.copy_(model->identity_weight.t());
  first->att_src.copy_(model->att_src);
  first->att_dst.copy_(model->att_dst);
  first->bias_.copy_(model->hidden_bias);
  const auto edge_index = attention_graph_of(adjacency).edge_index;
  const auto hidden = torch::elu(first->forward(torch::eye(n), edge_index));
  const auto expected = model->output->forward(hidden, edge_index);

  EXPECT_TRUE(torch::allclose(model->forward(adjacency), expected, 1e-5, 1e-6));
}

TEST(NodeGat, RowBlocksListedRowsAndAWholeSubgraphGiveTheWholeGraphsForward) {
  constexpr std::int64_t n = 23;
  torch::manual_seed(6);
  const auto adjacency = irregular_graph(n);
  NodeGat model(gat_config(n));
  randomise_biases(*model);
  model->eval();
  const torch::NoGradGuard no_grad;
  const auto whole = model->forward(adjacency);

  for (const std::int64_t block : {1, 5, 23, 64})
    EXPECT_TRUE(
        torch::allclose(model->infer_by_row_blocks(adjacency, {.rows = block}), whole, 1e-5, 1e-6))
        << "rows per block " << block;
  // Blocks cut by entries too (a row has 3 to 6): a few rows a block.
  EXPECT_TRUE(torch::allclose(model->infer_by_row_blocks(adjacency, {.rows = 64, .entries = 10}),
                              whole, 1e-5, 1e-6));
  const auto rows = torch::tensor(std::vector<std::int64_t>{19, 2, 7, 0, 22}, torch::kInt64);
  EXPECT_TRUE(torch::allclose(model->infer_rows(adjacency, rows, {.rows = 2, .entries = 7}),
                              whole.index_select(0, rows), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(model->forward_on(adjacency, torch::arange(n, torch::kInt64)), whole,
                              1e-5, 1e-6));
}

TEST(NodeGat, InferenceRefusesAutograd) {
  const auto adjacency = irregular_graph(6);
  NodeGat model(gat_config(6));
  EXPECT_THROW(model->infer_by_row_blocks(adjacency, {.rows = 2}), std::logic_error);
}

TEST(NodeGat, TrainingReachesEveryParameterAndAttentionDropoutChangesTheLogits) {
  constexpr std::int64_t n = 19;
  torch::manual_seed(7);
  const auto adjacency = irregular_graph(n);
  NodeGat model(gat_config(n));
  model->train();
  const auto first = model->forward(adjacency);
  first.pow(2).sum().backward();
  for (const auto& parameter : model->named_parameters()) {
    ASSERT_TRUE(parameter.value().grad().defined()) << parameter.key();
    EXPECT_GT(parameter.value().grad().abs().sum().item<double>(), 0) << parameter.key();
  }
  EXPECT_FALSE(torch::allclose(model->forward(adjacency), first));  // fresh dropout draws
}

TEST(RowNeighbourhood, ListsTheRowsFirstThenTheirSourcesAndOnlyTheRowsEntries) {
  const auto adjacency = irregular_graph(10);
  const auto rows = torch::tensor(std::vector<std::int64_t>{4, 1}, torch::kInt64);
  const auto local = row_neighbourhood(adjacency, rows, torch::kCPU);
  ASSERT_EQ(local.rows, 2);
  EXPECT_EQ(local.nodes[0].item<std::int64_t>(), 4);
  EXPECT_EQ(local.nodes[1].item<std::int64_t>(), 1);
  const auto offsets = adjacency.row_offsets();
  const auto entries = (offsets[5] - offsets[4] + offsets[2] - offsets[1]).item<std::int64_t>();
  EXPECT_EQ(local.graph.num_edges(), entries);
  // Every edge ends at one of the two rows.
  EXPECT_LT(local.graph.edge_index[1].max().item<std::int64_t>(), 2);
  EXPECT_THROW(
      row_neighbourhood(adjacency, torch::tensor(std::vector<std::int64_t>{3, 3}), torch::kCPU),
      std::invalid_argument);
}

TEST(NodeModelConfig, RoundTripsThroughJsonAndReadsAnOlderGcnCheckpoint) {
  const auto gat = gat_config(40);
  const nlohmann::json json = gat;
  const auto read = json.get<NodeModelConfig>();
  EXPECT_EQ(read.architecture, "gat");
  EXPECT_EQ(read.heads, 2);
  EXPECT_EQ(read.hidden_width(), 6);
  // What checkpoints held before the node GAT existed: no architecture, no heads.
  const auto older = nlohmann::json{
      {"num_nodes", 40},
      {"hidden", 200},
      {"num_classes", 3},
      {"dropout", 0.5}}.get<NodeModelConfig>();
  EXPECT_EQ(older.architecture, "gcn");
  EXPECT_EQ(older.heads, 1);
  EXPECT_THROW(nlohmann::json({{"architecture", "mlp"},
                               {"num_nodes", 4},
                               {"hidden", 2},
                               {"num_classes", 2},
                               {"dropout", 0.1}})
                   .get<NodeModelConfig>(),
               std::invalid_argument);
}

TEST(NodeModelConfig, MakeNodeModelBuildsTheArchitectureItNames) {
  const auto gat = make_node_model(gat_config(12));
  EXPECT_NE(dynamic_cast<NodeGatImpl*>(gat.get()), nullptr);
  EXPECT_EQ(gat->named_parameters()["identity_weight"].sizes(), (std::vector<std::int64_t>{12, 6}));
  std::int64_t parameters = 0;
  for (const auto& p : gat->parameters()) parameters += p.numel();
  EXPECT_EQ(parameters, gat_config(12).parameter_count());

  const auto gcn = make_node_model({.num_nodes = 12, .hidden = 5, .num_classes = 3});
  EXPECT_NE(dynamic_cast<NodeGcnImpl*>(gcn.get()), nullptr);
  auto two_headed_gcn = NodeModelConfig{.num_nodes = 12, .hidden = 5, .num_classes = 3};
  two_headed_gcn.heads = 2;
  EXPECT_THROW(make_node_model(two_headed_gcn), std::invalid_argument);
}

}  // namespace
}  // namespace headroom::models
