// Model families: the registry, the GCN layer against the dense formula, and the GCN family
// trained and evaluated through the same stages as the GAT.
#include "headroom/train/families/model_family.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fmt/format.h>

#include <cmath>
#include <fstream>

#include "headroom/eval/decision_threshold.hpp"
#include "headroom/loader/collate.hpp"
#include "headroom/models/gcn_classifier.hpp"
#include "headroom/models/vgae.hpp"
#include "headroom/nn/gcn_conv.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/stages/autoencoder_stage.hpp"
#include "headroom/train/stages/classifier_stage.hpp"
#include "headroom/train/step/losses.hpp"
#include "test_support.hpp"

namespace headroom::train {
namespace {

TEST(ModelFamilyRegistry, ListsEveryFamilyAndNamesUnknownOnes) {
  const auto names = model_family_names();
  ASSERT_EQ(names.size(), 3U);
  EXPECT_EQ(names[0], "gat");
  EXPECT_EQ(names[1], "vgae");
  EXPECT_EQ(names[2], "gcn");
  EXPECT_EQ(model_family("gcn").role(), FamilyRole::kClassifier);
  EXPECT_EQ(model_family("vgae").role(), FamilyRole::kAutoencoder);
  try {
    model_family("sage");
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("known: gat, vgae, gcn"), std::string::npos) << e.what();
  }
  EXPECT_THROW(classifier_family("vgae"), std::invalid_argument);
  EXPECT_NO_THROW(classifier_family("gcn"));
}

TEST(ModelFamilyRegistry, FamiliesResolveTheirPresetsAndOverrides) {
  TrainingConfig config;
  config.model.family = "gcn";
  config.model.size = models::ModelSize::kStudent;
  auto json = model_family("gcn").resolve_config(config.model, 50);
  EXPECT_EQ(json.at("hidden"), 32);
  EXPECT_EQ(json.at("layers"), 2);
  EXPECT_EQ(json.at("num_ids"), 50);
  config.model.hidden = 8;
  json = model_family("gcn").resolve_config(config.model, 50);
  EXPECT_EQ(json.at("hidden"), 8);
  // The GAT family's configuration is the one the stages have always built.
  config.model.family = "gat";
  EXPECT_EQ(model_family("gat").resolve_config(config.model, 50),
            nlohmann::json(resolve_gat_config(config.model, 50)));
  EXPECT_FALSE(model_family("gcn").static_estimate(json, false).has_value());
  EXPECT_TRUE(model_family("gat")
                  .static_estimate(model_family("gat").resolve_config(config.model, 50), false)
                  .has_value());
}

// D^-1/2 (A + I) D^-1/2 X W + b, computed densely.
at::Tensor dense_gcn(const at::Tensor& x, const at::Tensor& edge_index, nn::GCNConv& conv) {
  const auto n = x.size(0);
  auto adjacency = torch::zeros({n, n});
  for (std::int64_t e = 0; e < edge_index.size(1); ++e)
    adjacency[edge_index[1][e].item<std::int64_t>()][edge_index[0][e].item<std::int64_t>()] = 1.0;
  for (std::int64_t i = 0; i < n; ++i) adjacency[i][i] = 1.0;  // remaining self-loops
  const auto inverse_sqrt = adjacency.sum(1).pow(-0.5);
  const auto normalised = inverse_sqrt.unsqueeze(1) * adjacency * inverse_sqrt.unsqueeze(0);
  return normalised.matmul(x.matmul(conv->weight.t())) + conv->bias_;
}

TEST(AttackLogOdds, EqualsLogPOverOneMinusPAndKeepsTheRankingWhereFloatProbabilitiesSaturate) {
  // Two classes: attack minus normal logit. Gaps of 20 and 30 both round to P(attack) == 1 in
  // float32; their log-odds stay apart, so a threshold between them still separates them.
  const auto logits = torch::tensor({{0.0F, 1.5F}, {2.0F, -1.0F}, {0.0F, 20.0F}, {0.0F, 30.0F}});
  const auto odds = attack_log_odds(logits);
  const auto p = attack_probability(logits);
  for (int i = 0; i < 2; ++i) {
    const double pi = p[i].item<double>();
    EXPECT_NEAR(odds[i].item<double>(), std::log(pi / (1 - pi)), 1e-5) << i;
  }
  EXPECT_EQ(p[2].item<float>(), 1.0F);
  EXPECT_EQ(p[3].item<float>(), 1.0F);
  EXPECT_FLOAT_EQ(odds[2].item<float>(), 20.0F);
  EXPECT_FLOAT_EQ(odds[3].item<float>(), 30.0F);
  // Three classes: the attack class (1) against both others.
  const auto three = torch::tensor({{0.5F, 1.0F, -2.0F}});
  const auto probabilities = torch::softmax(three, 1);
  const double attack = probabilities[0][1].item<double>();
  EXPECT_NEAR(attack_log_odds(three)[0].item<double>(), std::log(attack / (1 - attack)), 1e-5);
}

TEST(AttackLogOdds, ThresholdsRoundTripThroughTheStoredProbability) {
  for (const double log_odds : {-20.0, -4.25, 0.0, 1e-3, 2.5, 17.0, 20.0}) {
    const double p = eval::probability_of_log_odds(log_odds);
    EXPECT_GT(p, 0.0);
    EXPECT_LT(p, 1.0);
    EXPECT_NEAR(eval::log_odds_of_probability(p), log_odds, 1e-6) << log_odds;
  }
  // Beyond, the double's resolution next to 1 shows, and the threshold still stays below 1.
  EXPECT_LT(eval::probability_of_log_odds(30.0), 1.0);
  EXPECT_NEAR(eval::log_odds_of_probability(eval::probability_of_log_odds(30.0)), 30.0, 1e-2);
  EXPECT_DOUBLE_EQ(eval::probability_of_log_odds(kEvenOdds), 0.5);
  EXPECT_TRUE(std::isinf(eval::log_odds_of_probability(1.0)));
}

TEST(GCNConvTest, MatchesTheDenseFormula) {
  torch::manual_seed(3);
  nn::GCNConv conv(nn::GCNConvOptions{4, 3, true});
  {
    torch::NoGradGuard no_grad;
    conv->bias_.uniform_(-1, 1);
  }
  const auto x = torch::randn({5, 4});
  // A path, a node with an existing self-loop (kept, not doubled), and an isolated node (4).
  const auto edge_index = torch::tensor({0, 1, 1, 2, 3, 1, 2, 0, 3, 3}, torch::kLong).view({2, 5});
  const auto out = conv->forward(x, edge_index);
  EXPECT_TRUE(torch::allclose(out, dense_gcn(x, edge_index, conv), 1e-5, 1e-6))
      << out << "\n"
      << dense_gcn(x, edge_index, conv);
}

TEST(GcnFamilyTest, CheckpointRoundTripRebuildsTheSameClassifier) {
  testing::TempDir dir;
  torch::manual_seed(1);
  TrainingConfig config;
  config.model.family = "gcn";
  const auto& family = classifier_family("gcn");
  const auto json = family.resolve_config(config.model, 20);
  auto model = family.build_classifier(json);
  model->eval();
  CheckpointInfo info;
  info.kind = "gcn";
  info.model_config = json;
  save_model_checkpoint(dir / "best.pt", *model, info);

  CheckpointInfo loaded_info;
  auto loaded = load_classifier_checkpoint(dir / "best.pt", torch::kCPU, &loaded_info);
  EXPECT_EQ(loaded_info.kind, "gcn");
  EXPECT_NE(dynamic_cast<models::GcnClassifierImpl*>(loaded.get()), nullptr);
  auto x = torch::rand({6, 11});
  x.select(1, 0).copy_(torch::tensor({0, 3, 5, 19, 2, 2}));
  const auto edges = torch::tensor({0, 1, 2, 3, 4, 1, 2, 3, 4, 5}, torch::kLong).view({2, 5});
  const auto batch = torch::tensor({0, 0, 0, 1, 1, 1}, torch::kLong);
  EXPECT_TRUE(
      torch::equal(model->forward(x, edges, batch, 2), loaded->forward(x, edges, batch, 2)));
}

std::vector<double> train_losses(const std::filesystem::path& metrics) {
  std::vector<double> losses;
  for (const auto& line : testing::read_metrics(metrics))
    losses.push_back(line.at("train_loss").get<double>());
  return losses;
}

TEST(GcnFamilyTest, TrainsThroughTheNormalStageAndIsEvaluated) {
  testing::TempDir dir;
  const auto store = testing::build_synthetic_store(dir.path(), 60000, 4);
  std::string output;
  const auto common = fmt::format("--store '{}' --runs-dir '{}' --threads 1 --progress false",
                                  store.string(), (dir / "runs").string());
  ASSERT_EQ(testing::run_command(fmt::format("'{}' normal --preset gcn,student --max-epochs 4 {} "
                                             "--batch-size 64 2>&1",
                                             HEADROOM_BINARY, common),
                                 &output),
            0)
      << output;
  const auto run = dir / "runs" / "store" / "student_normal_gcn";
  EXPECT_EQ(read_checkpoint_info(run / "best.pt").kind, "gcn");
  const auto losses = train_losses(run / "metrics.jsonl");
  ASSERT_EQ(losses.size(), 4U);
  EXPECT_LT(losses.back(), losses.front()) << "the GCN learns";

  ASSERT_EQ(testing::run_command(fmt::format("'{}' evaluation {} --models '{}' 2>&1",
                                             HEADROOM_BINARY, common, run.string()),
                                 &output),
            0)
      << output;
  std::ifstream in(dir / "runs" / "store" / "evaluation" / "evaluation.json");
  const auto evaluation = nlohmann::json::parse(in);
  ASSERT_TRUE(evaluation.contains("student_normal_gcn")) << evaluation.dump(2);
  bool saw_validation = false;
  for (const auto& group : evaluation["student_normal_gcn"]["groups"]) {
    if (group["split"] != "validation" || !group["attack_type"].get<std::string>().empty())
      continue;
    saw_validation = true;
    // Better than chance on the held-out validation graphs.
    EXPECT_GT(group["metrics"]["roc_auc"].get<double>(), 0.6) << group.dump();
  }
  EXPECT_TRUE(saw_validation) << evaluation.dump(2);

  // The stage calibrated its decision on validation and stored it in best.pt as a probability;
  // evaluation reports both decisions with it, on the log-odds it equals.
  const auto decision = read_checkpoint_info(run / "best.pt").decision;
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->method, "f1");
  EXPECT_NEAR(evaluation["student_normal_gcn"]["calibrated_threshold"].get<double>(),
              eval::log_odds_of_probability(decision->threshold), 1e-9);
  for (const auto& group : evaluation["student_normal_gcn"]["groups"])
    EXPECT_TRUE(group.contains("calibrated_metrics")) << group.dump();
  EXPECT_TRUE(evaluation["student_normal_gcn"].contains("warnings"));

  // Rerunning the finished stage recalibrates to the same threshold and leaves best.pt as it was
  // (distillation caches are keyed on its bytes).
  const auto read_bytes = [](const std::filesystem::path& file) {
    std::ifstream bytes(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(bytes), {});
  };
  const auto before = read_bytes(run / "best.pt");
  ASSERT_EQ(testing::run_command(fmt::format("'{}' normal --preset gcn,student --max-epochs 4 {} "
                                             "--batch-size 64 2>&1",
                                             HEADROOM_BINARY, common),
                                 &output),
            0)
      << output;
  EXPECT_EQ(read_bytes(run / "best.pt"), before);

  // A second model evaluated later joins the summary; the first one's entry stays.
  ASSERT_EQ(testing::run_command(fmt::format("'{}' normal --preset gcn,teacher --max-epochs 1 {} "
                                             "--batch-size 64 2>&1",
                                             HEADROOM_BINARY, common),
                                 &output),
            0)
      << output;
  const auto teacher_run = dir / "runs" / "store" / "teacher_normal_gcn";
  ASSERT_EQ(testing::run_command(fmt::format("'{}' evaluation {} --models '{}' 2>&1",
                                             HEADROOM_BINARY, common, teacher_run.string()),
                                 &output),
            0)
      << output;
  std::ifstream merged_in(dir / "runs" / "store" / "evaluation" / "evaluation.json");
  const auto merged = nlohmann::json::parse(merged_in);
  EXPECT_TRUE(merged.contains("student_normal_gcn")) << merged.dump(2);
  EXPECT_TRUE(merged.contains("teacher_normal_gcn")) << merged.dump(2);
  EXPECT_EQ(merged["student_normal_gcn"], evaluation["student_normal_gcn"]);
}

TEST(GcnFamilyTest, AutoencoderStageRefusesAClassifierFamily) {
  TrainingConfig config;
  config.run.store = "x";
  config.stage = kAutoencoderStage;
  config.model.family = "gcn";
  EXPECT_THROW(validate(config), std::invalid_argument);
  config.stage = kNormalStage;
  EXPECT_NO_THROW(validate(config));
  config.model.family = "vgae";
  EXPECT_THROW(validate(config), std::invalid_argument);
}

}  // namespace
}  // namespace headroom::train

namespace headroom::train {
namespace {

// The autoencoder family interface, with the VGAE: what the stages, fusion and evaluation read of
// a model is what the VGAE's own loss and score functions compute on its output.
TEST(AutoencoderFamilyTest, TheVgaeFamilyComputesTheVgaesLossEncodingAndScores) {
  testing::TempDir dir;
  const auto store = store::GraphStore::open(testing::build_synthetic_store(dir.path(), 20000));
  const auto& family = autoencoder_family("vgae");
  EXPECT_EQ(&family, &model_family("vgae"));
  EXPECT_THROW(autoencoder_family("gat"), std::invalid_argument);
  const auto model = preset_model(store, "vgae", models::ModelSize::kStudent);
  torch::manual_seed(3);
  auto built = family.build_autoencoder(model.config);
  auto& vgae = dynamic_cast<models::VGAEImpl&>(*built);
  vgae.eval();  // the latent is mu: two forward passes agree
  torch::NoGradGuard no_grad;
  const auto batch = loader::collate(store, store.train_ids().first(16), {});
  const auto out = vgae.forward(batch.x, batch.edge_index);
  const auto config = model.config.get<models::VgaeConfig>();

  const auto pass = family.training_pass(vgae, batch);
  EXPECT_TRUE(torch::equal(pass.loss,
                           vgae_loss(out, batch, config.num_ids, vgae_loss_weights(config)).total));
  EXPECT_TRUE(torch::equal(pass.encoding.latent, out.z));
  EXPECT_TRUE(torch::equal(pass.encoding.reconstruction, out.reconstruction));
  const auto encoding = family.encode(vgae, batch);
  EXPECT_TRUE(torch::equal(encoding.latent, out.z));
  EXPECT_EQ(encoding.latent.size(1), family.latent_width(model.config));
  EXPECT_EQ(encoding.reconstruction.size(1), family.reconstruction_width(model.config));

  const auto scores = family.graph_scores(vgae, batch);
  EXPECT_EQ(scores.size(0), batch.num_graphs);
  EXPECT_TRUE(torch::equal(scores, graph_reconstruction_score(out, batch)));
  const auto evidence = family.evidence(vgae, batch);
  EXPECT_TRUE(torch::equal(evidence.graph_score, scores.to(torch::kFloat)));
  const auto nodes = batch.x.size(0);
  for (const auto& term : {evidence.feature_error, evidence.identity_error,
                           evidence.neighbour_error, evidence.latent_divergence}) {
    EXPECT_EQ(term.sizes(), (std::vector<std::int64_t>{nodes}));
    EXPECT_TRUE(term.ge(0).all().item<bool>());
  }
}

TEST(AutoencoderFamilyTest, EachFamilyReadsOnlyItsOwnOverrides) {
  EXPECT_TRUE(model_family("vgae").reads_option("latent"));
  EXPECT_FALSE(model_family("gat").reads_option("latent"));
  EXPECT_TRUE(model_family("gat").reads_option("fc_layers"));
  EXPECT_FALSE(model_family("gcn").reads_option("gradient_checkpointing"));
  for (const auto name : model_family_names()) {
    EXPECT_TRUE(model_family(name).reads_option("dropout")) << name;
    EXPECT_FALSE(model_family(name).reads_option("no_such_option")) << name;
  }
}

}  // namespace
}  // namespace headroom::train
