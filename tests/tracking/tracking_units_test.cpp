// The pieces under the trackers: scalars from metric lines, params from a configuration, the
// TFRecord checksum, credentials in a tracking URI, the registry of sinks.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

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
  // A password with an unencoded '#', '/' or '?' (which ends a URL's authority) is masked whole:
  // before the fix these printed "http://u:Pa55#word@127.0.0.1:9" and the like in full.
  EXPECT_EQ(without_user_info("http://u:Pa55#word@127.0.0.1:9"), "http://***@127.0.0.1:9");
  EXPECT_EQ(without_user_info("http://u:Pa/55@127.0.0.1:9/api"), "http://***@127.0.0.1:9/api");
  EXPECT_EQ(without_user_info("https://u:Pa?55@host"), "https://***@host");
  EXPECT_EQ(without_user_info("http://token#x@host"), "http://***@host");
  EXPECT_EQ(user_info_of("http://u:Pa55#word@127.0.0.1:9"), "u:Pa55#word");
  EXPECT_EQ(without_user_info("http://host:5000/a?b#c"), "http://host:5000/a?b#c");
  HttpClient client(HttpTimeouts{std::chrono::milliseconds(500), std::chrono::milliseconds(1000)});
  const auto url = "http://alice:S3cr3t@127.0.0.1:" + std::to_string(testing::free_tcp_port());
  try {
    client.request("GET", url);
    ADD_FAILURE() << "nothing listens there, yet a request was answered";
  } catch (const HttpTransportError& e) {
    EXPECT_EQ(std::string(e.what()).find("S3cr3t"), std::string::npos) << e.what();
  }
}

// A server on a loopback port the kernel picks (no race for a free port), that hands each
// connection to `serve` on its own thread until destroyed.
class LoopbackServer {
 public:
  explicit LoopbackServer(std::function<void(int fd, const std::atomic<bool>& stop)> serve)
      : serve_(std::move(serve)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        ::listen(listener_, 8) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0)
      throw std::runtime_error("cannot listen on a loopback port");
    port_ = ntohs(address.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~LoopbackServer() {
    stop_ = true;
    acceptor_.join();
    for (auto& t : connections_) t.join();
    ::close(listener_);
  }
  std::string url(const std::string& user_info = "") const {
    return "http://" + (user_info.empty() ? "" : user_info + "@") +
           "127.0.0.1:" + std::to_string(port_);
  }

 private:
  void accept_loop() {
    while (!stop_) {
      pollfd ready{listener_, POLLIN, 0};
      if (::poll(&ready, 1, 50) <= 0) continue;
      const int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) continue;
      connections_.emplace_back([this, fd] {
        serve_(fd, stop_);
        ::close(fd);
      });
    }
  }
  std::function<void(int, const std::atomic<bool>&)> serve_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  std::vector<std::thread> connections_;
};

// A server that answers 200 and then streams without end used to be buffered whole: 700 MB took
// a run to 4.65 GB. The answer is cut at the client's limit and the request fails, saying why.
// (Mutation seen to fail: append_bounded without its limit check.)
TEST(HttpClientLimits, AnEndlessAnswerIsCutAtTheLimitNotHeld) {
  std::atomic<std::uint64_t> sent{0};
  LoopbackServer server([&sent](int fd, const std::atomic<bool>& stop) {
    char request[4096];
    (void)::recv(fd, request, sizeof request, 0);
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n";
    (void)::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
    const std::string chunk(1 << 16, 'x');
    while (!stop && sent < (std::uint64_t{512} << 20)) {
      const auto n = ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL);
      if (n <= 0) return;  // the client hung up
      sent += static_cast<std::uint64_t>(n);
    }
  });
  HttpTimeouts limits{std::chrono::milliseconds(2000), std::chrono::milliseconds(60000)};
  limits.max_response_bytes = std::size_t{1} << 20;
  HttpClient client(limits);
  try {
    client.request("GET", server.url("alice:S3cr3t") + "/api/2.0/mlflow/experiments/get");
    ADD_FAILURE() << "an endless answer was accepted";
  } catch (const HttpTransportError& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds 1048576 bytes"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("S3cr3t"), std::string::npos) << e.what();
  }
  // The client stopped reading: only what the kernel's socket buffers took went out.
  EXPECT_LT(sent.load(), std::uint64_t{64} << 20);
}

// A server that accepts and never answers held the process 10-12 s at exit (each request's own
// timeout) where the docs promise a 5 s drain. The grace now ends a request in flight.
// (Mutation seen to fail: the destructor without http_.abort_after.)
TEST(HttpClientLimits, AHungServerDoesNotHoldTheTrackerPastItsGrace) {
  LoopbackServer server([](int fd, const std::atomic<bool>& stop) {
    char request[4096];
    (void)::recv(fd, request, sizeof request, 0);
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(20));  // never answers
  });
  std::ostringstream warnings;
  const auto start = std::chrono::steady_clock::now();
  {
    MlflowOptions options;
    options.uri = server.url();
    options.timeouts = {std::chrono::milliseconds(2000), std::chrono::milliseconds(30000)};
    options.shutdown_grace = std::chrono::milliseconds(500);
    MlflowTracker tracker(options, warnings);
    train::TrainingConfig config;
    config.stage = train::kNormalStage;
    config.run.store = "stores/s";
    tracker.start_parent("parent", config);
    tracker.end_parent(RunStatus::kFinished);
  }
  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The request's own timeout is 30 s; the grace 0.5 s, and libcurl looks at the deadline about
  // once a second.
  EXPECT_LT(seconds, 5.0) << warnings.str();
  EXPECT_NE(warnings.str().find("were not delivered"), std::string::npos) << warnings.str();
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
