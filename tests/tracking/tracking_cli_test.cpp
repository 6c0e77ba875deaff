// Experiment tracking end to end: `headroom run` against a real MLflow tracking server on
// loopback (the PyPI package, in the tracking venv of scripts/setup.sh), read back through its
// REST API; the TensorBoard event files read by the tensorboard package; the HTML report loaded
// in headless Chromium. And a server that stops mid-run: training finishes regardless.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "headroom/tracking/http_client.hpp"
#include "headroom/tracking/metric_scalars.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::size_t count_of(const std::string& text, const std::string& word) {
  std::size_t n = 0;
  for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

// A port nobody listens on now (bound, then released).
int free_loopback_port() {
  for (int port = 20000 + static_cast<int>(::getpid() % 20000);; ++port) {
    tracking::HttpClient probe({std::chrono::milliseconds(200), std::chrono::milliseconds(500)});
    try {
      probe.request("GET", "http://127.0.0.1:" + std::to_string(port) + "/");
    } catch (const tracking::HttpTransportError&) {
      return port;  // refused: free
    }
  }
}

// `mlflow server` on 127.0.0.1 in its own process group, stopped on destruction.
class MlflowServer {
 public:
  explicit MlflowServer(const fs::path& dir) : port_(free_loopback_port()), dir_(dir) {
    const auto command = "cd " + dir.string() +
                         " && setsid " HEADROOM_TRACKING_PYTHON
                         " -m mlflow server --host 127.0.0.1 --port " +
                         std::to_string(port_) + " --workers 1 --backend-store-uri sqlite:///" +
                         (dir / "mlflow.db").string() + " --artifacts-destination " +
                         (dir / "artifacts").string() + " > server.log 2>&1 & echo $! > server.pid";
    EXPECT_EQ(testing::run_command(command), 0);
    tracking::HttpClient client;
    for (int i = 0; i < 240 && !up_; ++i) {
      try {
        up_ = client.request("GET", uri() + "/health").status == 200;
      } catch (const tracking::HttpTransportError&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
    }
  }
  ~MlflowServer() { stop(); }
  bool up() const { return up_; }
  std::string uri() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string log() const { return slurp(dir_ / "server.log"); }
  void stop() {
    if (stopped_) return;
    stopped_ = true;
    testing::run_command("kill -TERM -- -$(cat " + (dir_ / "server.pid").string() +
                         ") 2>/dev/null; sleep 1; kill -KILL -- -$(cat " +
                         (dir_ / "server.pid").string() + ") 2>/dev/null; true");
  }

 private:
  int port_;
  fs::path dir_;
  bool up_ = false;
  bool stopped_ = false;
};

json get(tracking::HttpClient& client, const std::string& url) {
  const auto answer = client.request("GET", url);
  EXPECT_EQ(answer.status, 200) << url << ": " << answer.body;
  return json::parse(answer.body);
}

json post(tracking::HttpClient& client, const std::string& url, const json& body) {
  const auto answer = client.request("POST", url, body.dump());
  EXPECT_EQ(answer.status, 200) << url << ": " << answer.body;
  return json::parse(answer.body);
}

std::map<std::string, std::string> pairs_of(const json& list) {
  std::map<std::string, std::string> out;
  for (const auto& entry : list) out[entry["key"]] = entry.value("value", "");
  return out;
}

// One `headroom run` with MLflow and TensorBoard on, shared by the tests below.
class TrackedRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    server_ = new MlflowServer(dir_->path());
    if (!server_->up()) return;
    const auto command = "cd " + dir_->path().string() +
                         " && " HEADROOM_BINARY
                         " run --frames 20000 --max-epochs 2 --batch-size 64 --threads 2"
                         " --vgae-hidden 32,16 --latent 8 --progress false"
                         " --step-metrics-every 1 --mlflow-experiment tracked --mlflow-uri " +
                         server_->uri() + " --tensorboard tb > run.log 2>&1";
    exit_code_ = testing::run_command(command);
  }
  static void TearDownTestSuite() {
    delete server_;
    delete dir_;
  }
  void SetUp() override {
    ASSERT_TRUE(server_->up()) << "mlflow server did not start:\n" << server_->log();
    ASSERT_EQ(exit_code_, 0) << slurp(dir_->path() / "run.log");
  }
  static fs::path runs() { return dir_->path() / "runs" / "synthetic"; }
  static std::string api(const std::string& endpoint) {
    return server_->uri() + "/api/2.0/mlflow/" + endpoint;
  }

  static testing::TempDir* dir_;
  static MlflowServer* server_;
  static int exit_code_;
};
testing::TempDir* TrackedRun::dir_ = nullptr;
MlflowServer* TrackedRun::server_ = nullptr;
int TrackedRun::exit_code_ = -1;

const std::vector<std::string> kStages = {"teacher_autoencoder", "teacher_curriculum",
                                          "student_autoencoder_kd", "student_curriculum_kd"};

TEST_F(TrackedRun, MlflowHoldsEveryStageNestedWithParamsMetricsAndStatus) {
  tracking::HttpClient client;
  const auto experiment = get(client, api("experiments/get-by-name?experiment_name=tracked"));
  const auto id = experiment["experiment"]["experiment_id"].get<std::string>();
  const auto found =
      post(client, api("runs/search"), {{"experiment_ids", {id}}, {"max_results", 100}});
  std::map<std::string, json> by_name;
  for (const auto& run : found["runs"]) by_name[run["info"]["run_name"]] = run;
  ASSERT_TRUE(by_name.count("headroom run synthetic")) << found.dump();
  const auto& parent = by_name["headroom run synthetic"];
  EXPECT_EQ(parent["info"]["status"], "FINISHED");
  const auto parent_id = parent["info"]["run_id"].get<std::string>();

  for (const auto& stage : kStages) {
    SCOPED_TRACE(stage);
    ASSERT_TRUE(by_name.count(stage));
    const auto& run = by_name[stage];
    const auto run_id = run["info"]["run_id"].get<std::string>();
    EXPECT_EQ(run["info"]["status"], "FINISHED");
    const auto tags = pairs_of(run["data"]["tags"]);
    EXPECT_EQ(tags.at("mlflow.parentRunId"), parent_id);
    EXPECT_EQ(tags.at("dataset"), "synthetic");
    EXPECT_EQ(tags.at("device"), "cpu");
    EXPECT_EQ(tags.at("store_fingerprint").size(), 16U);
    EXPECT_FALSE(tags.at("headroom_commit").empty());

    // Every param: the stage's whole configuration as config.json records it.
    const auto params = pairs_of(run["data"]["params"]);
    const auto config = json::parse(slurp(runs() / stage / "config.json"))["config"];
    const auto expected = tracking::flatten_to_strings(config);
    EXPECT_EQ(params.size(), expected.size());
    for (const auto& [key, value] : expected)
      EXPECT_EQ(params.count(key) ? params.at(key) : "<missing>", value) << key;

    // One series per key of the epoch lines, one point per epoch at steps 0..epochs-1.
    const auto epochs = testing::read_metrics(runs() / stage / "metrics.jsonl", "epoch");
    ASSERT_EQ(epochs.size(), 2U);
    std::set<std::string> keys;
    tracking::MetricScalars scalars;
    for (const auto& line : epochs)
      for (const auto& scalar : scalars.of(line)) keys.insert(scalar.key);
    ASSERT_TRUE(keys.count("train_loss"));
    ASSERT_TRUE(keys.count("validation_loss"));
    for (const auto& key : keys) {
      const auto history = get(client, api("metrics/get-history?run_id=" + run_id +
                                           "&metric_key=" + client.escape(key)));
      ASSERT_EQ(history.value("metrics", json::array()).size(), epochs.size()) << key;
      std::set<std::int64_t> steps;
      for (const auto& point : history["metrics"]) steps.insert(point.value("step", -1));
      EXPECT_EQ(steps, (std::set<std::int64_t>{0, 1})) << key;
    }
    // The sampled step lines too: one point per sample.
    const auto samples = testing::read_metrics(runs() / stage / "metrics.jsonl", "step");
    ASSERT_FALSE(samples.empty());
    const auto history =
        get(client, api("metrics/get-history?run_id=" + run_id + "&metric_key=step%2Frss_bytes"));
    EXPECT_EQ(history.value("metrics", json::array()).size(), samples.size());
    // Artifacts: config.json at least.
    const auto artifacts = get(client, api("artifacts/list?run_id=" + run_id));
    std::set<std::string> files;
    for (const auto& file : artifacts.value("files", json::array())) files.insert(file["path"]);
    EXPECT_TRUE(files.count("config.json")) << artifacts.dump();
  }
  ASSERT_TRUE(by_name.count("evaluation"));
  EXPECT_EQ(by_name["evaluation"]["info"]["status"], "FINISHED");
  EXPECT_EQ(slurp(dir_->path() / "run.log").find("warning"), std::string::npos)
      << slurp(dir_->path() / "run.log");
}

TEST_F(TrackedRun, TensorBoardFilesHoldEveryScalarSeries) {
  // What the event files must hold, from metrics.jsonl: per stage, each key's number of points.
  json expected = json::object();
  for (const auto& stage : kStages) {
    tracking::MetricScalars scalars;
    std::map<std::string, int> counts;
    std::ifstream in(runs() / stage / "metrics.jsonl");
    for (std::string line; std::getline(in, line);)
      for (const auto& scalar : scalars.of(json::parse(line))) ++counts[scalar.key];
    expected[stage] = counts;
  }
  testing::write_text_file(dir_->path() / "expected.json", expected.dump());
  testing::write_text_file(dir_->path() / "read_events.py", R"py(
import json, sys
from tensorboard.backend.event_processing import event_accumulator
expected = json.load(open(sys.argv[1]))
problems = []
for stage, counts in expected.items():
    acc = event_accumulator.EventAccumulator(sys.argv[2] + "/" + stage, size_guidance={"scalars": 0})
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    if tags != set(counts):
        problems.append(f"{stage}: tags differ: {sorted(tags ^ set(counts))[:10]}")
    for tag, n in counts.items():
        if tag in tags and len(acc.Scalars(tag)) != n:
            problems.append(f"{stage}/{tag}: {len(acc.Scalars(tag))} points, expected {n}")
print("\n".join(problems) or "ok")
sys.exit(1 if problems else 0)
)py");
  std::string output;
  EXPECT_EQ(testing::run_command(std::string(HEADROOM_TRACKING_PYTHON) + " " +
                                     (dir_->path() / "read_events.py").string() + " " +
                                     (dir_->path() / "expected.json").string() + " " +
                                     (dir_->path() / "tb").string() + " 2>&1",
                                 &output),
            0)
      << output;
}

TEST_F(TrackedRun, ReportLoadsInChromiumWithEveryPlot) {
  const auto report = runs() / "report.html";
  ASSERT_TRUE(fs::exists(report));
  EXPECT_NE(
      slurp(dir_->path() / "run.log").find("report: " + std::string("runs/synthetic/report.html")),
      std::string::npos);
  const std::string chromium =
      "chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
      "--virtual-time-budget=10000 ";
  std::string dom;
  ASSERT_EQ(testing::run_command(chromium + "--dump-dom file://" + report.string() + " 2>/dev/null",
                                 &dom),
            0);
  EXPECT_NE(dom.find("data-status=\"ready\""), std::string::npos) << dom.substr(0, 2000);
  EXPECT_NE(dom.find("data-errors=\"0\""), std::string::npos);
  for (const auto& stage : kStages)
    for (const char* plot : {"loss-", "validation-", "throughput-", "memory-", "plan-"})
      EXPECT_NE(dom.find(plot + stage), std::string::npos) << plot << stage;
  for (const char* plot : {"roc-validation", "roc-test_01_known_vehicle_known_attack"})
    EXPECT_NE(dom.find(plot), std::string::npos) << plot;
  EXPECT_NE(dom.find("F1 by model and test condition"), std::string::npos);
  EXPECT_NE(dom.find("table class=\"confusion\""), std::string::npos);

  // A picture for people: kept beside the test binary's working directory.
  const auto png = fs::current_path() / "tracking_report_screenshot.png";
  fs::remove(png);
  ASSERT_EQ(testing::run_command(chromium + "--window-size=1400,5200 --screenshot=" + png.string() +
                                 " file://" + report.string() + " > /dev/null 2>&1"),
            0);
  ASSERT_TRUE(fs::exists(png));
  EXPECT_GT(fs::file_size(png), 50000U);
}

TEST(MlflowTracking, ServerStoppedMidRunNeitherStopsTrainingNorRepeatsTheWarning) {
  testing::TempDir dir;
  MlflowServer server(dir.path());
  ASSERT_TRUE(server.up()) << server.log();
  const auto store = testing::build_synthetic_store(dir.path(), 20000);
  const auto metrics = dir / "runs" / "store" / "student_normal" / "metrics.jsonl";
  const auto command = "cd " + dir.path().string() + " && (" HEADROOM_BINARY " normal --store " +
                       store.string() +
                       " --preset gat,student --max-epochs 4 --batch-size 32 --threads 2"
                       " --step-metrics-every 1 --progress false --mlflow-uri " +
                       server.uri() + " > train.log 2>&1; echo $? > train.rc) &";
  ASSERT_EQ(testing::run_command(command), 0);
  const auto wait_for = [](const std::function<bool()>& done) {
    for (int i = 0; i < 1200 && !done(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    return done();
  };
  ASSERT_TRUE(wait_for([&] { return testing::read_metrics(metrics).size() >= 1; }))
      << slurp(dir / "train.log");
  server.stop();
  ASSERT_TRUE(
      wait_for([&] { return fs::exists(dir / "train.rc") && !slurp(dir / "train.rc").empty(); }));
  const auto log = slurp(dir / "train.log");
  EXPECT_EQ(std::stoi(slurp(dir / "train.rc")), 0) << log;
  EXPECT_EQ(count_of(log, "warning"), 1U) << log;
  EXPECT_EQ(testing::read_metrics(metrics).size(), 4U) << log;
}

}  // namespace
}  // namespace headroom
