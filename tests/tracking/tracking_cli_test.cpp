// Experiment tracking end to end: `headroom run` against a real MLflow tracking server on
// loopback (the PyPI package, in the tracking venv of scripts/setup.sh), read back through its
// REST API; the TensorBoard event files read by the tensorboard package; the HTML report loaded
// in headless Chromium. And a server that stops mid-run: training finishes regardless.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
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
#include "headroom/tracking/tracking_sink.hpp"
#include "test_support.hpp"
#include "train/separable_corpus.hpp"

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

// Polls `done` every 250 ms for up to `limit`; its last answer.
bool wait_for(const std::function<bool()>& done,
              std::chrono::milliseconds limit = std::chrono::minutes(5)) {
  for (auto end = std::chrono::steady_clock::now() + limit;
       !done() && std::chrono::steady_clock::now() < end;)
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  return done();
}

// `mlflow server` on 127.0.0.1 in a session of its own (setsid). The server starts a uvicorn
// worker and a job runner with its own consumer processes, all in that session: stopping the
// session, not just the first process, leaves nothing behind.
class MlflowServer {
 public:
  explicit MlflowServer(const fs::path& dir) : port_(testing::free_tcp_port()), dir_(dir) {
    // `$$` is read inside the new session, where it is the session's id; the outer shell's `$!`
    // could name a process outside it.
    const auto command = "cd " + dir.string() +
                         " && setsid sh -c 'echo $$ > server.pid && exec " HEADROOM_TRACKING_PYTHON
                         " -m mlflow server --host 127.0.0.1 --port " +
                         std::to_string(port_) + " --workers 1 --backend-store-uri sqlite:///" +
                         (dir / "mlflow.db").string() + " --artifacts-destination " +
                         (dir / "artifacts").string() + "' < /dev/null > server.log 2>&1 &";
    EXPECT_EQ(testing::run_command(command), 0);
    const auto pid_file = dir / "server.pid";
    if (!wait_for([&] { return slurp(pid_file).ends_with('\n'); }, std::chrono::seconds(30))) {
      ADD_FAILURE() << "no " << pid_file << " after 30 s:\n" << log();
      return;
    }
    session_ = std::stoi(slurp(pid_file));
    tracking::HttpClient client;
    up_ = wait_for(
        [&] {
          try {
            return client.request("GET", uri() + "/health").status == 200;
          } catch (const tracking::HttpTransportError&) {
            return false;
          }
        },
        std::chrono::minutes(2));
  }
  ~MlflowServer() {
    if (!stop()) ADD_FAILURE() << "mlflow server processes outlived the test:\n" << processes();
  }
  MlflowServer(const MlflowServer&) = delete;
  MlflowServer& operator=(const MlflowServer&) = delete;

  bool up() const { return up_; }
  std::string uri() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string log() const { return slurp(dir_ / "server.log"); }
  // The processes left in the server's session (`ps` lines), empty when none.
  std::string processes() const {
    std::string out;
    if (session_ > 0) testing::run_command("ps -o pid=,args= -s " + sid(), &out);
    return out;
  }
  // Sends `signal` ("TERM", or "KILL" for a server that dies at once) to every process in the
  // server's session, then KILL to what is left after 20 s. True when no process is left.
  bool stop(const std::string& signal = "TERM") {
    if (session_ <= 0) return true;
    const auto gone = [&] { return processes().empty(); };
    testing::run_command("pkill -" + signal + " -s " + sid());
    if (!wait_for(gone, std::chrono::seconds(20))) testing::run_command("pkill -KILL -s " + sid());
    const bool stopped = wait_for(gone, std::chrono::seconds(10));
    if (stopped) session_ = 0;
    return stopped;
  }

 private:
  std::string sid() const { return std::to_string(session_); }

  int port_;
  fs::path dir_;
  int session_ = 0;  // the server's session id (its first process's pid); 0: not started
  bool up_ = false;
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
  // No warning but the tracker's own: on a loaded machine one request can outlast its timeout and
  // be retried, which the tracker says once (CI saw it); every point reaching the server is what
  // the checks above hold it to.
  std::istringstream log(slurp(dir_->path() / "run.log"));
  for (std::string line; std::getline(log, line);) {
    if (line.find("warning") == std::string::npos) continue;
    EXPECT_TRUE(line.starts_with("headroom: warning: MLflow tracking at ") &&
                line.ends_with("tracking updates are buffered and retried"))
        << line;
  }
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
  // The fusion stages train in the epoch loop like the others (over per-graph features): their
  // epochs have a throughput and a memory chart too, against the budget they ran under.
  for (const char* plot : {"loss-fusion_dqn", "throughput-fusion_dqn", "memory-fusion_dqn"})
    EXPECT_NE(dom.find(plot), std::string::npos) << plot;
  EXPECT_EQ(dom.find("budget 0 MiB"), std::string::npos);
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

// The shell command of `headroom normal` on `store` for exactly `epochs` epochs (no early stop),
// reporting to `server`, its output in train.log (of the directory it runs in).
std::string normal_stage(const fs::path& store, const MlflowServer& server, int epochs) {
  return HEADROOM_BINARY " normal --store " + store.string() +
         " --preset gat,student --max-epochs " + std::to_string(epochs) + " --patience " +
         std::to_string(epochs) +
         " --batch-size 32 --threads 2 --step-metrics-every 1 --progress false --mlflow-uri " +
         server.uri() + " > train.log 2>&1";
}

// The node task (headroom run on a text corpus) is tracked like the graph stages: its stage's
// epoch series reach TensorBoard, one point per epoch.
TEST(NodeTaskTracking, TensorBoardHoldsTheNodeStagesEpochSeries) {
  testing::TempDir dir;
  testing::write_separable_corpus(dir.path() / "corpus", 3, 40);
  std::string output;
  ASSERT_EQ(testing::run_command("cd " + dir.path().string() +
                                     " && " HEADROOM_BINARY
                                     " run corpus --max-epochs 3 --patience 100 --threads 2"
                                     " --progress false --tensorboard tb 2>&1",
                                 &output),
            0)
      << output;
  const auto epochs =
      testing::read_metrics(dir.path() / "runs" / "corpus" / "node_gcn" / "metrics.jsonl", "epoch");
  ASSERT_EQ(epochs.size(), 3U);
  testing::write_text_file(dir.path() / "read_events.py", R"py(
import sys
from tensorboard.backend.event_processing import event_accumulator
acc = event_accumulator.EventAccumulator(sys.argv[1], size_guidance={"scalars": 0})
acc.Reload()
for tag in ("train_loss", "validation_loss"):
    print(tag, len(acc.Scalars(tag)) if tag in acc.Tags()["scalars"] else 0)
)py");
  ASSERT_EQ(testing::run_command(std::string(HEADROOM_TRACKING_PYTHON) + " " +
                                     (dir.path() / "read_events.py").string() + " " +
                                     (dir.path() / "tb" / "node_gcn").string() + " 2>&1",
                                 &output),
            0)
      << output;
  EXPECT_NE(output.find("train_loss 3"), std::string::npos) << output;
  EXPECT_NE(output.find("validation_loss 3"), std::string::npos) << output;
}

// A training command run by `sh -c` in a child process (the command starts with `exec`, so the
// child's pid is the training process's), for tests that signal it while it trains.
struct ChildTraining {
  explicit ChildTraining(const std::string& command) : pid(fork()) {
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", command.c_str(), nullptr);
      _exit(127);
    }
  }
  // Whether the child has ended (reaped once; its wait status then in `status`).
  bool ended() { return died = died || waitpid(pid, &status, WNOHANG) == pid; }
  // Waits until `metrics` holds an epoch line; false when the child ended first (or never got
  // there in wait_for's time).
  bool reaches_first_epoch(const fs::path& metrics) {
    return wait_for([&] { return ended() || !testing::read_metrics(metrics).empty(); }) && !died;
  }
  // Sends signal `number` unless the child has ended.
  void signal(int number) {
    if (!ended()) kill(pid, number);
  }
  // Waits up to `limit` for the child to end; true when it did, else it is killed (SIGKILL).
  bool ends_within(std::chrono::seconds limit) {
    if (wait_for([&] { return ended(); }, limit)) return true;
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return false;
  }

  pid_t pid;
  int status = 0;
  bool died = false;
};

// Synchronised on events, not on timing: once the first epoch's metrics line is written the
// training process is stopped (SIGSTOP), the server is killed, and only then does training go on
// (SIGCONT) — so the server is gone before the second epoch on every machine, however fast.
TEST(MlflowTracking, ServerStoppedMidRunNeitherStopsTrainingNorRepeatsTheWarning) {
  testing::TempDir dir;
  MlflowServer server(dir.path());
  ASSERT_TRUE(server.up()) << server.log();
  const auto metrics = dir / "runs" / "store" / "student_normal" / "metrics.jsonl";
  constexpr std::size_t kEpochs = 30;
  // Built before the fork: the child only execs.
  const auto command = "cd " + dir.path().string() + " && exec " +
                       normal_stage(testing::build_synthetic_store(dir.path(), 20000), server,
                                    static_cast<int>(kEpochs));
  ChildTraining child(command);
  ASSERT_GT(child.pid, 0);
  const bool trained = child.reaches_first_epoch(metrics);
  child.signal(SIGSTOP);
  // Killed, not asked to stop: the server vanishes between two requests.
  const bool server_gone = server.stop("KILL");
  const auto epochs_with_server = testing::read_metrics(metrics).size();
  child.signal(SIGCONT);
  child.ends_within(std::chrono::seconds(600));
  const auto log = slurp(dir / "train.log");
  ASSERT_TRUE(trained) << "ended before its first epoch:\n" << log;
  ASSERT_TRUE(server_gone) << server.processes();
  ASSERT_LT(epochs_with_server, kEpochs) << "training ended before the server was gone";
  ASSERT_TRUE(WIFEXITED(child.status)) << log;
  EXPECT_EQ(WEXITSTATUS(child.status), 0) << log;
  EXPECT_EQ(count_of(log, "warning"), 1U) << log;
  EXPECT_EQ(testing::read_metrics(metrics).size(), kEpochs) << log;
}

// Synchronised on the server, not on timing: the signal comes once the server holds the first
// epoch's loss (a metrics line on disk only says it was queued; on a loaded machine the grace can
// end before a queued loss is sent, which is the grace's purpose, so no test may depend on it).
TEST(MlflowTracking, SigtermEndsTheOpenRunKilledAndTheProcessDiesOfIt) {
  testing::TempDir dir;
  MlflowServer server(dir.path());
  ASSERT_TRUE(server.up()) << server.log();
  // Built before the fork: the child only execs.
  const auto command = "cd " + dir.path().string() + " && exec " +
                       normal_stage(testing::build_synthetic_store(dir.path(), 20000), server, 200);
  tracking::HttpClient client;
  const auto api = [&](const std::string& endpoint) {
    return server.uri() + "/api/2.0/mlflow/" + endpoint;
  };
  // The run's id and how many train_loss values the server holds; quiet while they do not exist.
  std::string run_id;
  const auto losses_on_server = [&]() -> std::size_t {
    const auto experiment =
        client.request("GET", api("experiments/get-by-name?experiment_name=headroom"));
    if (experiment.status != 200) return 0;
    const auto id = json::parse(experiment.body)["experiment"]["experiment_id"];
    const auto found =
        client.request("POST", api("runs/search"), json{{"experiment_ids", {id}}}.dump());
    const auto runs = json::parse(found.body).value("runs", json::array());
    if (found.status != 200 || runs.size() != 1) return 0;
    run_id = runs[0]["info"]["run_id"].get<std::string>();
    const auto history = client.request(
        "GET", api("metrics/get-history?run_id=" + run_id + "&metric_key=train_loss"));
    return history.status == 200 ? json::parse(history.body).value("metrics", json::array()).size()
                                 : 0;
  };
  ChildTraining child(command);
  ASSERT_GT(child.pid, 0);
  const bool delivered =
      wait_for([&] { return child.ended() || losses_on_server() >= 1; }) && !child.died;
  child.signal(SIGTERM);
  // The tracker gets 2 s to end its runs; far more than that means the signal was swallowed.
  const bool ended = child.ends_within(std::chrono::seconds(30));
  ASSERT_TRUE(delivered) << "no loss reached the server before the child ended:\n"
                         << slurp(dir / "train.log");
  ASSERT_TRUE(ended) << "still running 30 s after SIGTERM:\n" << slurp(dir / "train.log");
  ASSERT_TRUE(WIFSIGNALED(child.status)) << "exit status " << WEXITSTATUS(child.status);
  EXPECT_EQ(WTERMSIG(child.status), SIGTERM);

  const auto experiment = get(client, api("experiments/get-by-name?experiment_name=headroom"));
  const auto id = experiment["experiment"]["experiment_id"].get<std::string>();
  const auto found = post(client, api("runs/search"), {{"experiment_ids", {id}}});
  ASSERT_EQ(found.value("runs", json::array()).size(), 1U) << found.dump();
  const auto& info = found["runs"][0]["info"];
  EXPECT_EQ(info["run_id"], run_id) << "the killed run is not the one that was logging";
  EXPECT_EQ(info["run_name"], "student_normal");
  EXPECT_EQ(info["status"], "KILLED");
  EXPECT_GE(info.value("end_time", std::int64_t{0}), info.value("start_time", std::int64_t{1}));
  // What the server held before the signal is still there after the run was ended.
  EXPECT_GE(losses_on_server(), 1U);
}

// Every training command and `run` offer every registered sink's flags (generated from the
// registry, so a new sink's flags need no edit in the commands).
TEST(TrackingSinkRegistry, EveryTrainingCommandOffersEverySinksFlags) {
  for (const char* command :
       {"autoencoder", "curriculum", "normal", "fusion", "evaluation", "run"}) {
    std::string help;
    ASSERT_EQ(testing::run_command(std::string(HEADROOM_BINARY) + " " + command + " --help", &help),
              0)
        << help;
    for (const auto* sink : tracking::tracking_sinks())
      for (const auto& flag : sink->flags)
        EXPECT_NE(help.find(std::string(flag.name)), std::string::npos)
            << "`headroom " << command << " --help` lacks " << flag.name;
  }
}

}  // namespace
}  // namespace headroom
