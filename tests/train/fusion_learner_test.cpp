// The fusion learners and the features they see: the DQN learns per graph which model to trust,
// both learners resume exactly, and the state's scaling comes from normal graphs only.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "headroom/loader/epoch_order.hpp"
#include "headroom/models/fusion_networks.hpp"
#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/fusion/fusion_features.hpp"
#include "headroom/train/fusion/fusion_learner.hpp"
#include "test_support.hpp"

namespace headroom::train {
namespace {

// Graphs of two contexts: in context 1 the classifier is right and the VGAE guesses, in context 0
// the other way round. The context is visible in the state (column 5); the wrong model's score
// points the other way (with noise). No single model and no fixed weight decides both contexts.
FusionData two_context_data(std::int64_t graphs, std::uint64_t seed) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  const at::Tensor labels = (at::rand({graphs}, generator) < 0.4).to(at::kFloat);
  const at::Tensor context = (at::rand({graphs}, generator) < 0.5).to(at::kFloat);
  const at::Tensor right = labels * 0.9 + 0.05;
  const at::Tensor noise = (1 - right + 0.1 * at::randn({graphs}, generator)).clamp(0, 1);
  const at::Tensor p = context * right + (1 - context) * noise;
  const at::Tensor a = (1 - context) * right + context * noise;
  at::Tensor states = at::zeros({graphs, kFusionStateSize});
  states.select(1, 0).copy_(p);
  states.select(1, 3).copy_(a);
  states.select(1, 5).copy_(context * 2 - 1);
  return {states, labels, p, a};
}

// The rows of a `rows`-graph fitting set in the order epoch `epoch` visits them, as the stage
// draws it.
at::Tensor visiting_order(std::int64_t rows, std::int64_t epoch) {
  const auto order = loader::epoch_permutation(static_cast<std::uint64_t>(rows), 11,
                                               static_cast<std::uint64_t>(epoch),
                                               loader::OrderStream::kFusionEpochs);
  return torch::tensor(std::vector<std::int64_t>(order.begin(), order.end()), torch::kLong);
}

double f1_at_half(const at::Tensor& scores, const at::Tensor& labels) {
  const at::Tensor predicted = (scores > 0.5).to(at::kFloat);
  const double tp = (predicted * labels).sum().item<double>();
  const double fp = (predicted * (1 - labels)).sum().item<double>();
  const double fn = ((1 - predicted) * labels).sum().item<double>();
  return tp == 0 ? 0.0 : 2 * tp / (2 * tp + fp + fn);
}

TEST(DqnFusion, LearnsWhichModelToTrustPerGraph) {
  torch::manual_seed(3);
  const auto fit = two_context_data(4000, 1);
  const auto test = two_context_data(2000, 2);
  auto learner = make_fusion_learner("dqn", nullptr);
  for (std::int64_t epoch = 0; epoch < 12; ++epoch) {
    auto generator = at::make_generator<at::CPUGeneratorImpl>(100 + epoch);
    learner->train_epoch(fit, visiting_order(fit.size(), epoch), generator, epoch);
  }
  const at::Tensor weights = learner->classifier_weights(test);
  const at::Tensor context = test.states.select(1, 5) > 0;
  EXPECT_GT(weights.masked_select(context).mean().item<double>(), 0.7);
  EXPECT_LT(weights.masked_select(~context).mean().item<double>(), 0.3);
  const double fused = f1_at_half(learner->fused_scores(test), test.labels);
  EXPECT_GT(fused, 0.95);
  EXPECT_GT(fused, f1_at_half(test.probability, test.labels) + 0.2);
  EXPECT_GT(fused, f1_at_half(0.5 * test.probability + 0.5 * test.anomaly, test.labels) + 0.2);
}

TEST(LogisticFusion, FitsALinearlySeparableState) {
  torch::manual_seed(3);
  auto generator = at::make_generator<at::CPUGeneratorImpl>(5);
  const at::Tensor labels = (at::rand({2000}, generator) < 0.3).to(at::kFloat);
  at::Tensor states = at::randn({2000, kFusionStateSize}, generator) * 0.3;
  states.select(1, 7).add_(labels * 2 - 1);
  const FusionData data{states, labels, at::zeros({2000}), at::zeros({2000})};
  auto learner = make_fusion_learner("logistic", nullptr);
  for (std::int64_t epoch = 0; epoch < 20; ++epoch) {
    auto epoch_generator = at::make_generator<at::CPUGeneratorImpl>(10 + epoch);
    learner->train_epoch(data, visiting_order(data.size(), epoch), epoch_generator, epoch);
  }
  EXPECT_GT(f1_at_half(learner->fused_scores(data), labels), 0.97);
  EXPECT_FALSE(learner->classifier_weights(data).defined());
}

// Trains `epochs` epochs; when `restart_after` lies inside, the learner is saved there and a
// fresh one (other initial weights) continues from the saved state, as a resumed stage does.
std::vector<at::Tensor> train_with_restart(const char* kind, std::int64_t epochs,
                                           std::int64_t restart_after) {
  const auto fit = two_context_data(1500, 4);
  torch::manual_seed(7);
  auto learner = make_fusion_learner(kind, nullptr);
  for (std::int64_t epoch = 0; epoch < epochs; ++epoch) {
    if (epoch == restart_after) {
      torch::serialize::OutputArchive model, state;
      learner->model().save(model);
      learner->save_state(state);
      std::ostringstream model_bytes, state_bytes;
      model.save_to(model_bytes);
      state.save_to(state_bytes);
      torch::manual_seed(99);
      learner = make_fusion_learner(kind, learner->network_config());
      torch::serialize::InputArchive model_in, state_in;
      std::istringstream model_stream(model_bytes.str()), state_stream(state_bytes.str());
      model_in.load_from(model_stream);
      state_in.load_from(state_stream);
      learner->model().load(model_in);
      learner->load_state(state_in);
    }
    auto generator = at::make_generator<at::CPUGeneratorImpl>(1000 + epoch);
    learner->train_epoch(fit, visiting_order(fit.size(), epoch), generator, epoch);
  }
  return learner->model().parameters();
}

TEST(FusionLearners, ResumeFromSavedStateExactly) {
  for (const char* kind : {"dqn", "logistic"}) {
    const auto straight = train_with_restart(kind, 4, -1);
    const auto resumed = train_with_restart(kind, 4, 2);
    ASSERT_EQ(straight.size(), resumed.size());
    for (std::size_t i = 0; i < straight.size(); ++i)
      EXPECT_TRUE(torch::equal(straight[i], resumed[i])) << kind << " parameter " << i;
  }
}

TEST(FusionLearners, AnOrderThatMissesRowsIsRefused) {
  const auto fit = two_context_data(100, 6);
  for (const char* kind : {"dqn", "logistic"}) {
    auto learner = make_fusion_learner(kind, nullptr);
    auto generator = at::make_generator<at::CPUGeneratorImpl>(1);
    EXPECT_THROW(learner->train_epoch(fit, visiting_order(99, 0), generator, 0),
                 std::invalid_argument)
        << kind;
    EXPECT_THROW(learner->train_epoch(fit, visiting_order(100, 0).to(torch::kInt), generator, 0),
                 std::invalid_argument)
        << kind;
  }
}

TEST(FusionLearners, UnknownKindIsRefused) {
  EXPECT_THROW(make_fusion_learner("bandit", nullptr), std::invalid_argument);
}

at::Tensor example_signals() {
  // p, logit, score, node, id, neighbour, worst node, kl, nodes, edges, unknown share, log-odds
  return torch::tensor(
      {{0.1F, -2.2F, 0.10F, 0.01F, 0.2F, 0.05F, 0.02F, 0.3F, 20.F, 60.F, 0.F, -2.2F},
       {0.2F, -1.4F, 0.20F, 0.02F, 0.3F, 0.06F, 0.04F, 0.2F, 22.F, 70.F, 0.F, -1.4F},
       {0.3F, -0.8F, 0.30F, 0.03F, 0.4F, 0.07F, 0.06F, 0.4F, 24.F, 66.F, 0.1F, -0.8F},
       {0.9F, 2.2F, 9.00F, 0.50F, 4.0F, 0.50F, 2.00F, 3.0F, 2.F, 1.F, 1.F, 2.2F}});
}

TEST(FusionFeatures, ScalingComesFromNormalGraphsOnly) {
  const at::Tensor signals = example_signals();
  const std::vector<std::uint8_t> labels = {0, 0, 0, 1};
  const auto scaling = FusionScaling::fit(signals, labels);
  ASSERT_EQ(scaling.normal_scores, (std::vector<float>{0.1F, 0.2F, 0.3F}));
  // The reconstruction score's log-scale mean is that of the three normal graphs.
  const double expected = (std::log(0.1 + 1e-6) + std::log(0.2 + 1e-6) + std::log(0.3 + 1e-6)) / 3;
  EXPECT_NEAR(scaling.mean[0], expected, 1e-6);

  // The anomaly level is 0.5 at the normal graphs' 99th percentile (here the highest, 0.3),
  // below it for lower scores and near 1 far above.
  const at::Tensor a = anomaly_levels(signals, scaling);
  EXPECT_LT(a[0].item<float>(), a[1].item<float>());
  EXPECT_LT(a[1].item<float>(), 0.5F);
  EXPECT_NEAR(a[2].item<float>(), 0.5F, 1e-5);
  EXPECT_GT(a[3].item<float>(), 0.99F);

  const at::Tensor states = fusion_states(signals, scaling);
  ASSERT_EQ(states.sizes(), (std::vector<std::int64_t>{4, kFusionStateSize}));
  const at::Tensor p = attack_levels(signals, scaling);
  EXPECT_FLOAT_EQ(states[3][0].item<float>(), p[3].item<float>());  // p
  EXPECT_FLOAT_EQ(states[3][3].item<float>(), a[3].item<float>());  // a
  EXPECT_FLOAT_EQ(states[3][12].item<float>(), 1.F);                // the unknown-ID share
  EXPECT_NEAR(states[3][13].item<float>(), p[3].item<float>() - a[3].item<float>(),
              1e-6);                                  // p - a
  EXPECT_LE(states.abs().max().item<float>(), 10.F);  // scaled values are clipped

  EXPECT_THROW(FusionScaling::fit(signals, std::vector<std::uint8_t>{1, 1, 1, 1}),
               std::invalid_argument);
}

// The classifier's attack level is read from the log-odds: 0.5 at the normal graphs' 99th
// percentile, like a. Where P(attack) is exactly 1 in float32 for a normal window and an attack
// (log-odds 20 and 40: a vehicle the classifier never saw), the levels stay apart once scaled on
// that vehicle's normal windows, which is what vehicle calibration does.
TEST(FusionFeatures, AttackLevelComesFromTheLogOddsAndDoesNotTieWhereProbabilityDoes) {
  at::Tensor signals = example_signals().repeat({2, 1});
  const std::vector<float> log_odds = {18, 20, 19, 40, 21, 19.5F, 20.5F, 45};
  for (std::int64_t i = 0; i < 8; ++i) {
    signals[i][kAttackLogOdds] = log_odds[static_cast<std::size_t>(i)];
    signals[i][kAttackProbability] = 1.0F;  // what float32 softmax gives at these log-odds
  }
  const std::vector<std::uint8_t> labels = {0, 0, 0, 1, 0, 0, 0, 1};
  const auto scaling = FusionScaling::fit(signals, labels);
  EXPECT_FLOAT_EQ(scaling.normal_log_odds.back(), 21.F);
  const at::Tensor p = attack_levels(signals, scaling);
  EXPECT_NEAR(p[4].item<float>(), 0.5F, 1e-5) << "0.5 at the normal 99th percentile (21)";
  for (const std::int64_t normal : {0, 1, 2, 4, 5, 6})
    for (const std::int64_t attack : {3, 7})
      EXPECT_LT(p[normal].item<float>(), p[attack].item<float>()) << normal << " " << attack;
  EXPECT_GT(p[3].item<float>(), 0.99F);

  // A scaling fitted before the attack level existed (no log-odds in its JSON) keeps p =
  // P(attack) and the logit state, so that its checkpoint decides as it did.
  nlohmann::json legacy = scaling;
  legacy.erase("normal_log_odds");
  legacy.erase("log_odds_spread");
  const auto old_scaling = legacy.get<FusionScaling>();
  EXPECT_TRUE(torch::equal(attack_levels(signals, old_scaling),
                           signals.select(1, kAttackProbability).contiguous()));
  const at::Tensor old_states = fusion_states(signals, old_scaling);
  EXPECT_TRUE(torch::allclose(old_states.select(1, 1), signals.select(1, kAttackLogit) / 20.0));
}

TEST(FusionFeatures, ScalingRoundTripsThroughJson) {
  const auto scaling = FusionScaling::fit(example_signals(), std::vector<std::uint8_t>{0, 0, 1, 0});
  const nlohmann::json json = scaling;
  const auto back = json.get<FusionScaling>();
  EXPECT_EQ(back.mean, scaling.mean);
  EXPECT_EQ(back.spread, scaling.spread);
  EXPECT_EQ(back.normal_scores, scaling.normal_scores);
  EXPECT_EQ(back.normal_log_odds, scaling.normal_log_odds);
  EXPECT_DOUBLE_EQ(back.log_odds_spread, scaling.log_odds_spread);
  nlohmann::json broken = json;
  broken["mean"] = std::vector<double>{1.0};
  EXPECT_THROW(broken.get<FusionScaling>(), std::invalid_argument);
}

// A hybrid fusion's signals carry the baseline's window score as one more column; its state is the
// GNN state plus log(1 + score) standardised against the normal graphs, worked by hand here. The
// GNN columns are untouched, and a scaling without the baseline's statistics refuses such signals.
TEST(FusionFeatures, HybridStateAddsTheBaselineScoreScaledAgainstNormalGraphs) {
  const at::Tensor gnn = example_signals();
  const std::vector<float> baseline = {0.02F, 0.05F, 0.08F, 3.0F};  // the attack has unknown IDs
  EXPECT_THROW(with_baseline_signal(gnn, std::vector<float>{1.F}), std::invalid_argument);
  const at::Tensor signals = with_baseline_signal(gnn, baseline);
  ASSERT_EQ(signals.size(1), kFusionSignalCount + 1);
  EXPECT_TRUE(has_baseline_signal(signals));
  EXPECT_FALSE(has_baseline_signal(gnn));

  const std::vector<std::uint8_t> labels = {0, 0, 0, 1};
  const auto scaling = FusionScaling::fit(signals, labels);
  ASSERT_TRUE(scaling.has_baseline());
  const std::vector<double> logs = {std::log1p(0.02), std::log1p(0.05), std::log1p(0.08)};
  const double mean = (logs[0] + logs[1] + logs[2]) / 3;
  double squares = 0;
  for (const double v : logs) squares += (v - mean) * (v - mean);
  const double spread = std::sqrt(squares / 2);  // the sample standard deviation
  EXPECT_NEAR(scaling.baseline_mean, mean, 1e-9);
  EXPECT_NEAR(scaling.baseline_spread, spread, 1e-9);

  const at::Tensor states = fusion_states(signals, scaling);
  ASSERT_EQ(states.sizes(), (std::vector<std::int64_t>{4, kHybridFusionStateSize}));
  const auto gnn_scaling = FusionScaling::fit(gnn, labels);
  EXPECT_TRUE(
      torch::allclose(states.slice(1, 0, kFusionStateSize), fusion_states(gnn, gnn_scaling)));
  EXPECT_NEAR(states[0][kFusionStateSize].item<float>(), (logs[0] - mean) / spread, 1e-5);
  EXPECT_FLOAT_EQ(states[3][kFusionStateSize].item<float>(), 10.F);  // far out: clipped

  // The statistics travel with the checkpoint; a GNN fusion's scaling has none.
  const nlohmann::json json = scaling;
  const auto back = json.get<FusionScaling>();
  EXPECT_DOUBLE_EQ(back.baseline_mean, scaling.baseline_mean);
  EXPECT_DOUBLE_EQ(back.baseline_spread, scaling.baseline_spread);
  EXPECT_FALSE(nlohmann::json(gnn_scaling).contains("baseline_mean"));
  EXPECT_THROW(fusion_states(signals, gnn_scaling), std::invalid_argument);
}

// The unknown-ID share is read from the store's CAN IDs, so it means the same under every node
// identity: under CAN-ID identity it is the share of nodes whose feature 0 is the out-of-vocabulary
// index; under the frequency rank, whose feature 0 says nothing about the vocabulary, the share of
// nodes whose CAN ID the vocabulary lacks (several per window: unknown IDs stay apart there).
TEST(FusionSignals, UnknownIdShareComesFromTheCanIdsUnderEveryIdentity) {
  testing::TempDir dir;
  const auto by_id = store::GraphStore::open(testing::build_synthetic_store(dir.path(), 20000));
  preprocess::PreprocessOptions options;
  options.threads = 2;
  options.progress = 0;
  options.features.identity = graph::NodeIdentity::kFrequencyRank;
  preprocess::preprocess_dataset(dir / "data", dir / "ranked", options);
  const auto ranked = store::GraphStore::open(dir / "ranked");
  const auto& vocabulary = by_id.metadata().vocabulary;
  const auto oov = static_cast<float>(vocabulary.size());
  const auto ids = by_id.test_ids();
  const auto id_shares = unknown_id_shares(by_id, ids);
  const auto rank_shares = unknown_id_shares(ranked, ids);
  std::size_t with_unknown = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto a = by_id.graph(ids[i]);
    const auto width = by_id.metadata().node_feature_count;
    std::size_t at_oov = 0;
    for (std::size_t n = 0; n < a.num_nodes(); ++n) at_oov += a.node_features[n * width] == oov;
    EXPECT_FLOAT_EQ(id_shares[static_cast<std::int64_t>(i)].item<float>(),
                    static_cast<float>(at_oov) / static_cast<float>(a.num_nodes()));
    const auto b = ranked.graph(ids[i]);
    const auto unknown = std::count_if(b.node_can_ids.begin(), b.node_can_ids.end(), [&](auto id) {
      return !std::binary_search(vocabulary.begin(), vocabulary.end(), id);
    });
    EXPECT_FLOAT_EQ(rank_shares[static_cast<std::int64_t>(i)].item<float>(),
                    static_cast<float>(unknown) / static_cast<float>(b.num_nodes()));
    with_unknown += unknown > 0;
  }
  EXPECT_GT(with_unknown, 0U) << "fuzzing puts IDs outside the vocabulary into test windows";
}

}  // namespace
}  // namespace headroom::train
