// SGC through stage `node`, chosen by name alone: it learns a corpus whose classes have their own
// words, and its best checkpoint names its architecture and rebuilds through the registry.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "headroom/models/node_model.hpp"
#include "headroom/models/node_model_kind.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/stages/node_classifier_stage.hpp"
#include "separable_corpus.hpp"
#include "test_support.hpp"

namespace headroom::train {
namespace {

TrainingConfig sgc_stage(const testing::TempDir& dir) {
  TrainingConfig config;
  config.model.family = "sgc";
  config.model.layers = 3;  // K, read by SGC alone
  apply_node_task_defaults(config, {.preset = true});
  config.run.store = testing::build_separable_store(dir.path(), 3, 40);
  config.run.runs_dir = dir / "runs";
  config.run.threads = 2;
  config.run.progress = false;
  config.optimisation.max_epochs = 60;
  return config;
}

TEST(NodeSgcTraining, LearnsASeparableCorpusAndItsCheckpointNamesItsArchitecture) {
  testing::TempDir dir;
  const auto result = run_node_classifier_stage(sgc_stage(dir));

  const auto& test = result.evaluation.at("test");
  EXPECT_EQ(test.count, 30U);
  EXPECT_GE(test.accuracy, 0.9);
  EXPECT_GE(test.macro_f1, 0.9);
  const auto run_dir = dir / "runs" / "store" / "node_sgc";
  EXPECT_EQ(result.training.run_dir, run_dir);

  const auto info = read_checkpoint_info(run_dir / "best.pt");
  EXPECT_EQ(info.kind, "node_sgc");
  const auto config = info.model_config.get<models::NodeModelConfig>();
  EXPECT_EQ(config.architecture, "sgc");
  EXPECT_EQ(config.layers, 3);
  // The weights fit the module the stored configuration builds: W alone, N × classes.
  const auto rebuilt = models::make_node_model(config);
  load_checkpoint_weights(run_dir / "best.pt", *rebuilt);
  const auto weight = rebuilt->named_parameters()["identity_weight"];
  EXPECT_EQ(weight.size(0), config.num_nodes);
  EXPECT_EQ(weight.size(1), 3);
  EXPECT_EQ(rebuilt->parameters().size(), 1U);
}

// The stage's learning rate, when --learning-rate is not given, is the model's own: SGC's differs
// from the GCN's.
TEST(NodeSgcTraining, TheDefaultLearningRateIsTheNodeModels) {
  for (const auto name : models::node_model_names()) {
    TrainingConfig config;
    config.model.family = std::string(name);
    apply_node_task_defaults(config, {.preset = true});
    EXPECT_DOUBLE_EQ(effective_learning_rate(config),
                     models::node_model_kind(name).default_learning_rate())
        << name;
  }
  EXPECT_NE(models::node_model_kind("sgc").default_learning_rate(),
            models::node_model_kind("gcn").default_learning_rate());
}

TEST(NodeSgcTraining, RefusesAFlagSgcDoesNotRead) {
  testing::TempDir dir;
  auto config = sgc_stage(dir);
  config.model.hidden = 64;
  try {
    run_node_classifier_stage(config);
    FAIL() << "--hidden was accepted for SGC";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("--hidden does not apply to the node model sgc"), std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace headroom::train
