// The pieces under the trackers: scalars from metric lines, params from a configuration, the
// TFRecord checksum, credentials in a tracking URI, the registry of sinks.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "headroom/tensorboard/event_file_writer.hpp"
#include "headroom/tracking/http_client.hpp"
#include "headroom/tracking/metric_scalars.hpp"
#include "headroom/tracking/mlflow_tracker.hpp"
#include "headroom/tracking/trackers.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/stages/classifier_stage.hpp"
#include "test_support.hpp"

namespace headroom::tracking {
namespace {

TEST(MetricScalars, EpochLinesByEpochAndStepLinesCountedAcrossEpochs) {
  MetricScalars scalars;
  const auto step = scalars.of({{"type", "step"}, {"epoch", 0}, {"step", 3}, {"rss_bytes", 10}});
  ASSERT_EQ(step.size(), 1U);
  EXPECT_EQ(step[0].key, "step/rss_bytes");
  EXPECT_EQ(step[0].step, 3);
  const auto epoch = scalars.of({{"type", "epoch"},
                                 {"epoch", 0},
                                 {"steps", 5},
                                 {"best", true},
                                 {"name", "text is left out"},
                                 {"validation", {{"f1", 0.5}, {"confusion", {{"tp", 2}}}}}});
  ASSERT_EQ(epoch.size(), 4U);  // best, steps, validation/confusion/tp, validation/f1
  EXPECT_EQ(epoch[0].key, "best");
  EXPECT_EQ(epoch[0].value, 1.0);
  EXPECT_EQ(epoch[2].key, "validation/confusion/tp");
  EXPECT_EQ(epoch[3].key, "validation/f1");
  for (const auto& s : epoch) EXPECT_EQ(s.step, 0);
  // The next epoch's samples continue after the first epoch's 5 steps.
  EXPECT_EQ(scalars.of({{"type", "step"}, {"epoch", 1}, {"step", 2}, {"rss_bytes", 1}})[0].step, 7);
  EXPECT_TRUE(scalars.of({{"type", "other"}, {"x", 1}}).empty());
}

TEST(MetricScalars, ParamsFlattenNestedObjectsAndKeepStringsRaw) {
  const auto flat = flatten_to_strings(
      {{"a", "text"}, {"b", nullptr}, {"c", {{"d", 1.5}}}, {"e", {1, 2}}, {"f", false}});
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"a", "text"}, {"b", "null"}, {"c.d", "1.5"}, {"e", "[1,2]"}, {"f", "false"}};
  EXPECT_EQ(flat, expected);
}

TEST(TensorBoardRecords, MaskedCrc32cMatchesTheCastagnoliCheckValue) {
  // CRC-32C of "123456789" is 0xE3069283 (the standard check value); TFRecord masks it.
  const std::uint32_t crc = 0xE3069283u;
  EXPECT_EQ(tensorboard::masked_crc32c("123456789"), ((crc >> 15) | (crc << 17)) + 0xa282ead8u);
  EXPECT_NE(tensorboard::masked_crc32c("123456780"), tensorboard::masked_crc32c("123456789"));
}

TEST(TrackingUri, UserInfoIsReplacedForPrinting) {
  EXPECT_EQ(without_user_info("http://alice:S3cr3t@host:5000/x?y=1"), "http://***@host:5000/x?y=1");
  EXPECT_EQ(without_user_info("https://token@host"), "https://***@host");
  EXPECT_EQ(without_user_info("http://a:b@c@host/p@q"), "http://***@host/p@q");  // the last '@'
  EXPECT_EQ(without_user_info("http://host:5000/p@q"), "http://host:5000/p@q");  // a path's '@'
  EXPECT_EQ(without_user_info("alice:S3cr3t@host"), "***@host");                 // no scheme
  EXPECT_EQ(user_info_of("http://alice:S3cr3t@host"), "alice:S3cr3t");
  EXPECT_EQ(user_info_of("http://host"), "");
  HttpClient client(HttpTimeouts{std::chrono::milliseconds(500), std::chrono::milliseconds(1000)});
  const auto url = "http://alice:S3cr3t@127.0.0.1:" + std::to_string(testing::free_tcp_port());
  try {
    client.request("GET", url);
    ADD_FAILURE() << "nothing listens there, yet a request was answered";
  } catch (const HttpTransportError& e) {
    EXPECT_EQ(std::string(e.what()).find("S3cr3t"), std::string::npos) << e.what();
  }
}

// Credentials in --mlflow-uri used to be printed in the warning and the closing line.
TEST(TrackingUri, TheTrackerNeverPrintsCredentials) {
  std::ostringstream warnings;
  const auto port = std::to_string(testing::free_tcp_port());  // nothing listens there
  {
    MlflowOptions options;
    options.uri = "http://alice:S3cr3t@127.0.0.1:" + port + "/";
    options.timeouts = {std::chrono::milliseconds(200), std::chrono::milliseconds(500)};
    options.shutdown_grace = std::chrono::milliseconds(300);
    MlflowTracker tracker(options, warnings);
    train::TrainingConfig config;
    config.stage = train::kNormalStage;
    config.run.store = "stores/s";  // named in the run's tags; need not exist
    tracker.start_parent("parent", config);
    tracker.end_parent(RunStatus::kFinished);
  }
  const auto text = warnings.str();
  EXPECT_NE(text.find("warning: MLflow tracking at http://***@127.0.0.1:" + port),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("were not delivered to http://***@127.0.0.1:" + port), std::string::npos)
      << text;
  EXPECT_EQ(text.find("S3cr3t"), std::string::npos) << text;
  EXPECT_EQ(text.find("alice"), std::string::npos) << text;
}

// The sink registry (issue 26, item 3): names and flags unique across sinks, every flag with its
// help; Trackers opens exactly the sinks the values ask for, in registry order.
TEST(TrackingSinkRegistry, SinksAreOpenedByTheirOwnFlagsOnly) {
  std::set<std::string> names, flags;
  for (const auto* sink : tracking_sinks()) {
    EXPECT_TRUE(names.insert(std::string(sink->name)).second) << sink->name;
    EXPECT_NE(sink->open, nullptr) << sink->name;
    ASSERT_FALSE(sink->flags.empty()) << sink->name;
    for (const auto& flag : sink->flags) {
      EXPECT_TRUE(flags.insert(std::string(flag.name)).second) << flag.name << " in two sinks";
      EXPECT_TRUE(flag.name.starts_with("--")) << flag.name;
      EXPECT_FALSE(flag.help.empty()) << flag.name;
    }
  }
  EXPECT_GE(names.size(), 2U);

  std::ostringstream warnings;
  EXPECT_TRUE(Trackers(SinkFlagValues{}, warnings).observers().empty());
  testing::TempDir dir;
  const Trackers tensorboard_only({{"--tensorboard", (dir / "tb").string()}}, warnings);
  EXPECT_EQ(tensorboard_only.observers().size(), 1U);
  // A flag of a sink that is not asked for (the experiment without a server) opens nothing.
  EXPECT_TRUE(Trackers({{"--mlflow-experiment", "x"}}, warnings).observers().empty());
  EXPECT_TRUE(warnings.str().empty()) << warnings.str();
}

TEST(TrackingSinkRegistry, ABadValueIsRefusedNamingItsFlag) {
  std::ostringstream warnings;
  try {
    Trackers trackers({{"--mlflow-uri", "ftp://alice:S3cr3t@host"}}, warnings);
    FAIL() << "an ftp:// tracking server was accepted";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("--mlflow-uri must be an http:// or https://"), std::string::npos)
        << message;
    EXPECT_EQ(message.find("S3cr3t"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace headroom::tracking
