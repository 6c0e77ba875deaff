// Sampled training on one big graph, for when the full batch does not fit the memory budget: the
// sampled subgraph's normalisation, inference in row blocks, the planner's part size held to the
// budget by a measured step, and the stage choosing full batch or sampled steps by its budget.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/models/node_gcn.hpp"
#include "headroom/store/node_subgraph.hpp"
#include "headroom/train/stages/node_classifier_stage.hpp"
#include "headroom/train/step/node_step_probe.hpp"
#include "headroom/train/step/node_subgraph_batch.hpp"
#include "node_step_peaks.hpp"
#include "separable_corpus.hpp"
#include "test_support.hpp"

namespace headroom::train {
namespace {

template <typename T>
at::Tensor view_of(std::span<const T> values, at::ScalarType type) {
  return torch::from_blob(const_cast<T*>(values.data()), {static_cast<std::int64_t>(values.size())},
                          torch::TensorOptions().dtype(type));
}

nn::SparseAdjacency whole_graph(const store::NodeGraphStore& store) {
  return nn::SparseAdjacency(view_of(store.row_offsets(), torch::kInt64),
                             view_of(store.column_index(), torch::kInt32),
                             view_of(store.edge_weight(), torch::kFloat32), /*symmetric=*/true);
}

TEST(SampledSubgraph, ScalesNeighboursByTheirKeepProbabilityAndKeepsSelfLoops) {
  testing::TempDir dir;
  const auto store = store::NodeGraphStore::open(testing::build_separable_store(dir.path(), 3, 20));
  std::vector<std::uint32_t> part;
  for (std::uint32_t node = 0; node < store.num_nodes(); node += 3) part.push_back(node);
  const auto induced = store::induced_subgraph(store, part);
  const auto sampled = sampled_subgraph(store, part);
  ASSERT_EQ(sampled.columns, induced.columns);
  const auto scale =
      static_cast<float>(store.num_nodes() - 1) / static_cast<float>(part.size() - 1);
  std::size_t self_loops = 0;
  for (std::size_t row = 0; row < part.size(); ++row) {
    for (auto e = sampled.row_offsets[row]; e < sampled.row_offsets[row + 1]; ++e) {
      const auto entry = static_cast<std::size_t>(e);
      const bool self_loop = static_cast<std::size_t>(sampled.columns[entry]) == row;
      self_loops += self_loop ? 1 : 0;
      EXPECT_FLOAT_EQ(sampled.weights[entry],
                      self_loop ? induced.weights[entry] : induced.weights[entry] * scale);
    }
  }
  EXPECT_EQ(self_loops, part.size());

  const NodeSubgraphBuilder builder(store);
  const auto batch = builder.build(part, false);
  const auto& nodes = subgraph_of(*batch);
  EXPECT_EQ(batch->ids(), part);
  // Its seeds are exactly the part's training nodes, with their labels.
  std::vector<std::int64_t> expected_seeds;
  for (std::size_t i = 0; i < part.size(); ++i)
    if (store.node_split()[part[i]] == static_cast<std::uint8_t>(store::NodeSplit::kTrain))
      expected_seeds.push_back(static_cast<std::int64_t>(i));
  ASSERT_EQ(nodes.seeds().numel(), static_cast<std::int64_t>(expected_seeds.size()));
  for (std::size_t i = 0; i < expected_seeds.size(); ++i) {
    EXPECT_EQ(nodes.seeds()[static_cast<std::int64_t>(i)].item<std::int64_t>(), expected_seeds[i]);
    EXPECT_EQ(nodes.labels()[static_cast<std::int64_t>(i)].item<std::int64_t>(),
              store.node_label()[part[static_cast<std::size_t>(expected_seeds[i])]]);
  }
  EXPECT_DOUBLE_EQ(batch->loss_weight(LossReduction::kPerNode),
                   static_cast<double>(expected_seeds.size()));
}

TEST(NodeGcnInference, RowBlocksAndListedRowsGiveTheWholeGraphsForward) {
  testing::TempDir dir;
  const auto store = store::NodeGraphStore::open(testing::build_separable_store(dir.path(), 3, 20));
  const auto adjacency = whole_graph(store);
  torch::manual_seed(3);
  models::NodeGcn model(
      models::NodeModelConfig{.num_nodes = adjacency.num_nodes(), .hidden = 16, .num_classes = 3});
  model->eval();
  const torch::NoGradGuard no_grad;
  const auto whole = model->forward(adjacency);
  for (const std::int64_t rows : {std::int64_t{1}, std::int64_t{7}, adjacency.num_nodes()}) {
    const auto blocked = model->infer_by_row_blocks(adjacency, {.rows = rows});
    EXPECT_TRUE(torch::allclose(blocked, whole, 1e-5, 1e-6)) << rows << " rows per block";
  }
  // Listed rows, in any order: the same logits, from their neighbourhood's hidden rows alone.
  const auto rows = torch::tensor(std::vector<std::int64_t>{17, 3, 40, 3, 0}, torch::kInt64);
  EXPECT_TRUE(torch::allclose(model->infer_rows(adjacency, rows, {.rows = 5}),
                              whole.index_select(0, rows), 1e-5, 1e-6));
  const at::AutoGradMode with_grad(true);
  EXPECT_THROW(model->infer_by_row_blocks(adjacency, {.rows = 7}), std::logic_error);
  EXPECT_THROW(model->infer_rows(adjacency, rows, {.rows = 5}), std::logic_error);
}

TEST(NodeSampledPlan, PicksPartsWhoseMeasuredStepFitsAndRefusesBelowTheModelsOwnState) {
  testing::TempDir dir;
  const auto store =
      store::NodeGraphStore::open(testing::build_separable_store(dir.path(), 4, 100));
  // Wide enough that, as on a real corpus, the activations weigh like the model's state.
  const models::NodeModelConfig model{
      .num_nodes = static_cast<std::int64_t>(store.num_nodes()), .hidden = 2048, .num_classes = 4};
  PeakProbeOptions options;
  options.gradient_clip = 0;
  const auto peaks = testing::measure_node_step_peaks(store, model);
  // W1, its gradient and Adam's two moments: what no sampling removes.
  const double state = 4.0 * static_cast<double>(model.num_nodes * model.hidden * 4);
  ASSERT_GT(peaks.floor, state);
  ASSERT_GT(peaks.whole, peaks.floor);
  const auto budget = peaks.budget_between(0.5);

  const auto plan = plan_node_sampled(store, model, options, 5, budget);
  ASSERT_TRUE(plan.fits()) << describe_sampled_plan(plan, budget) << "\n"
                           << nlohmann::json(plan.samples).dump() << "\nfloor " << peaks.floor
                           << ", whole " << peaks.whole;
  EXPECT_GE(plan.parts, 2);
  EXPECT_LE(plan.measured_bytes, static_cast<double>(budget));
  // A step on another random part of the chosen size fits too.
  std::vector<std::uint32_t> shuffled(store.num_nodes());
  std::iota(shuffled.begin(), shuffled.end(), 0U);
  std::mt19937_64 random(11);
  std::shuffle(shuffled.begin(), shuffled.end(), random);
  std::vector<std::uint32_t> part(shuffled.begin(), shuffled.begin() + plan.nodes_per_part);
  std::sort(part.begin(), part.end());
  const auto again = measure_node_sampled_step(store, part, model, options);
  EXPECT_LE(again.peak_bytes, static_cast<double>(budget)) << describe_sampled_plan(plan, budget);
  EXPECT_NE(describe_sampled_plan(plan, budget).find(std::to_string(plan.parts) + " random parts"),
            std::string::npos);

  const auto starved = static_cast<std::int64_t>(state / 2);
  const auto none = plan_node_sampled(store, model, options, 5, starved);
  EXPECT_FALSE(none.fits());
  EXPECT_GT(none.floor_bytes, static_cast<double>(starved));
  EXPECT_NE(describe_sampled_plan(none, starved).find("none fits"), std::string::npos);
}

nlohmann::json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

TEST(NodeStagePlanning, TrainsFullBatchWithinItsBudgetSampledBelowItAndRefusesBelowTheFloor) {
  testing::TempDir dir;
  const auto store_path = testing::build_separable_store(dir.path(), 3, 120);
  const auto store = store::NodeGraphStore::open(store_path);
  const auto runs_for = [&](std::int64_t budget) {
    return dir.path() / ("runs-" + std::to_string(budget));
  };
  const auto run_with_budget = [&](std::int64_t budget) {
    TrainingConfig config;
    apply_node_task_defaults(config, {});
    config.run.store = store_path;
    config.run.runs_dir = runs_for(budget);
    config.run.threads = 2;
    config.run.progress = false;
    config.optimisation.max_epochs = 30;
    config.memory.budget = budget;
    config.model.hidden = 2048;
    return run_node_classifier_stage(config);
  };
  const models::NodeModelConfig model{
      .num_nodes = static_cast<std::int64_t>(store.num_nodes()), .hidden = 2048, .num_classes = 3};
  const auto peaks = testing::measure_node_step_peaks(store, model);
  const double state = 4.0 * static_cast<double>(model.num_nodes * model.hidden * 4);
  ASSERT_GT(peaks.whole, peaks.floor);

  const auto roomy = static_cast<std::int64_t>(peaks.whole * 4);
  const auto full = run_with_budget(roomy);
  EXPECT_EQ(full.mode, "full-batch");

  const auto tight = peaks.budget_between(0.4);
  const auto sampled = run_with_budget(tight);
  ASSERT_EQ(sampled.mode, "sampled");
  EXPECT_GE(sampled.parts_per_epoch, 2);
  EXPECT_GE(sampled.evaluation.at("test").accuracy, 0.9);
  const auto run_dir = runs_for(tight) / "store" / "node_gcn";
  const auto evaluation = read_json(run_dir / "evaluation.json");
  EXPECT_EQ(evaluation["training"]["mode"], "sampled");
  EXPECT_EQ(evaluation["training"]["sampled"]["parts_per_epoch"], sampled.parts_per_epoch);
  // Every epoch's tensor peak, measured by the loop, stayed within the budget, with no step
  // split after running out of memory; each epoch ran one step per part.
  const auto epochs = testing::read_metrics(run_dir / "metrics.jsonl", "epoch");
  ASSERT_FALSE(epochs.empty());
  for (const auto& epoch : epochs) {
    EXPECT_LE(epoch["utilization"].get<double>(), 1.0) << epoch.dump();
    EXPECT_EQ(epoch["oom_events"], 0);
    EXPECT_EQ(epoch["steps"], sampled.parts_per_epoch);
    EXPECT_EQ(epoch["plan"]["mode"], "sampled");
  }
  std::ifstream log_file(run_dir / "log.txt");
  const std::string log((std::istreambuf_iterator<char>(log_file)), {});
  EXPECT_NE(log.find("training on sampled subgraphs"), std::string::npos);

  const auto starved = static_cast<std::int64_t>(state / 2);
  try {
    run_with_budget(starved);
    ADD_FAILURE() << "a budget below the model's own state trained";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("even the smallest sampled step"), std::string::npos)
        << error.what();
  }
  EXPECT_FALSE(std::filesystem::exists(runs_for(starved) / "store" / "node_gcn" / "metrics.jsonl"));
}

// The GAT through the same plan: below its full batch it trains on sampled subgraphs (its
// validation and evaluation over row neighbourhoods), every epoch within the budget.
TEST(NodeStagePlanning, AGatBelowItsFullBatchTrainsSampledWithinItsBudget) {
  testing::TempDir dir;
  const auto store_path = testing::build_separable_store(dir.path(), 3, 120);
  const auto store = store::NodeGraphStore::open(store_path);
  const models::NodeModelConfig model{.num_nodes = static_cast<std::int64_t>(store.num_nodes()),
                                      .hidden = 64,
                                      .num_classes = 3,
                                      .architecture = "gat",
                                      .heads = 8};
  const auto peaks = testing::measure_node_step_peaks(store, model);
  ASSERT_GT(peaks.whole, peaks.floor);
  TrainingConfig config;
  config.model.family = "gat";
  apply_node_task_defaults(config, {.preset = true});
  config.run.store = store_path;
  config.run.runs_dir = dir / "runs";
  config.run.threads = 2;
  config.run.progress = false;
  config.optimisation.max_epochs = 30;
  config.memory.budget = peaks.budget_between(0.4);
  config.model.hidden = 64;
  const auto result = run_node_classifier_stage(config);

  ASSERT_EQ(result.mode, "sampled");
  EXPECT_GE(result.parts_per_epoch, 2);
  EXPECT_GE(result.evaluation.at("test").accuracy, 0.9);
  const auto epochs =
      testing::read_metrics(dir / "runs" / "store" / "node_gat" / "metrics.jsonl", "epoch");
  ASSERT_FALSE(epochs.empty());
  for (const auto& epoch : epochs) {
    EXPECT_LE(epoch["utilization"].get<double>(), 1.0) << epoch.dump();
    EXPECT_EQ(epoch["oom_events"], 0);
  }
}

}  // namespace
}  // namespace headroom::train

namespace headroom::train {
namespace {

// `headroom plan` on a node-graph store says what the stage would do at a budget: the full batch
// when it fits, the sampled steps (parts per epoch, measured peak) when it does not.
TEST(NodePlanCommand, ShowsTheFullBatchOrTheSampledStepsThatFitTheBudget) {
  testing::TempDir dir;
  const auto store_path = testing::build_separable_store(dir.path(), 3, 120);
  const auto store = store::NodeGraphStore::open(store_path);
  const models::NodeModelConfig model{
      .num_nodes = static_cast<std::int64_t>(store.num_nodes()), .hidden = 2048, .num_classes = 3};
  const auto peaks = testing::measure_node_step_peaks(store, model);
  const auto plan = [&](std::int64_t budget) {
    std::string output;
    const auto command = std::string(HEADROOM_BINARY) + " plan --store " + store_path.string() +
                         " --hidden 2048 --threads 2 --json --memory-budget " +
                         std::to_string(budget) + " 2>/dev/null";
    EXPECT_EQ(testing::run_command(command, &output), 0) << output;
    return nlohmann::json::parse(output);
  };
  const auto roomy = plan(static_cast<std::int64_t>(peaks.whole * 4));
  EXPECT_EQ(roomy["mode"], "full-batch");
  EXPECT_EQ(roomy["fits"], true);
  EXPECT_FALSE(roomy.contains("sampled"));

  const auto tight_budget = peaks.budget_between(0.4);
  const auto tight = plan(tight_budget);
  EXPECT_EQ(tight["mode"], "sampled");
  EXPECT_EQ(tight["fits"], false);
  EXPECT_GE(tight["sampled"]["parts_per_epoch"].get<std::int64_t>(), 2);
  EXPECT_LE(tight["sampled"]["measured_bytes"].get<double>(), static_cast<double>(tight_budget));
}

// A model flag no node model reads is refused, naming it, instead of being ignored.
TEST(NodePlanCommand, RefusesModelFlagsTheNodeModelDoesNotRead) {
  testing::TempDir dir;
  const auto store_path = testing::build_separable_store(dir.path(), 3, 20);
  const auto plan = [&](const std::string& flags, std::string* output) {
    return testing::run_command(std::string(HEADROOM_BINARY) + " plan --store " +
                                    store_path.string() + " --threads 1 " + flags + " 2>&1",
                                output);
  };
  std::string output;
  EXPECT_NE(plan("--heads 2", &output), 0);
  EXPECT_NE(output.find("--heads does not apply to the node model gcn (it does to gat)"),
            std::string::npos)
      << output;
  EXPECT_NE(plan("--preset gat --layers 3", &output), 0);
  EXPECT_NE(output.find("--layers"), std::string::npos) << output;
  EXPECT_EQ(plan("--preset gat --heads 2", &output), 0) << output;
  EXPECT_NE(output.find("GAT (2 heads"), std::string::npos) << output;
  // SGC reads --layers (its K) and nothing else.
  EXPECT_EQ(plan("--preset sgc --layers 3", &output), 0) << output;
  EXPECT_NE(output.find("SGC (K = 3"), std::string::npos) << output;
  EXPECT_NE(plan("--preset sgc --dropout 0.2", &output), 0);
  EXPECT_NE(output.find("--dropout does not apply to the node model sgc"), std::string::npos)
      << output;
  EXPECT_NE(plan("--preset mlp", &output), 0);
  EXPECT_NE(output.find("known: gcn, gat, sgc"), std::string::npos) << output;
}

}  // namespace
}  // namespace headroom::train
