#include "headroom/tracking/mlflow_tracker.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <fstream>
#include <mutex>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "headroom/tracking/metric_scalars.hpp"
#include "headroom/util/bounded_json.hpp"
#include "headroom/util/file_reader.hpp"
#include "headroom/util/printable_text.hpp"

#ifndef HEADROOM_COMMIT
#define HEADROOM_COMMIT "unknown"
#endif

namespace headroom::tracking {
namespace {

using Clock = std::chrono::steady_clock;
using Pairs = std::vector<std::pair<std::string, std::string>>;

// MLflow's limits on one runs/log-batch request (and on a param value).
constexpr std::size_t kMaxMetricsPerBatch = 1000;
constexpr std::size_t kMaxParamsPerBatch = 100;
constexpr std::size_t kMaxParamValue = 6000;
constexpr std::size_t kMaxTagValue = 5000;
// After a SIGINT/SIGTERM: how long the open runs get to be marked KILLED before the signal is
// re-raised.
constexpr std::chrono::milliseconds kSignalGrace{2000};
constexpr std::chrono::milliseconds kSignalPoll{200};
constexpr std::chrono::milliseconds kFirstRetry{250};
constexpr std::chrono::milliseconds kLongestRetry{8000};

std::atomic<int> caught_signal{0};
extern "C" void remember_signal(int signal_number) { caught_signal.store(signal_number); }

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string truncated(std::string text, std::size_t limit) {
  if (text.size() > limit) text.resize(limit);
  return text;
}

nlohmann::json key_values(const Pairs& pairs) {
  auto out = nlohmann::json::array();
  for (const auto& [key, value] : pairs) out.push_back({{"key", key}, {"value", value}});
  return out;
}

struct MetricPoint {
  std::string key;
  double value = 0;
  std::int64_t timestamp_ms = 0;
  std::int64_t step = 0;
};

struct Operation {
  enum class Kind { kCreateRun, kLog, kArtifact, kEndRun };
  Kind kind = Kind::kLog;
  int run = -1;
  int parent = -1;      // kCreateRun: the parent run's handle, or -1
  std::string text;     // kCreateRun: run name; kArtifact: artifact path; kEndRun: status
  std::string content;  // kArtifact: the file's bytes
  Pairs tags;
  Pairs params;
  std::vector<MetricPoint> metrics;
  std::int64_t time_ms = 0;
};

// The server answered, but not with success: permanent unless `retry` (429, 5xx).
struct ServerRefusal {
  std::string reason;
  bool retry = false;
};

}  // namespace

const char* run_status_name(RunStatus status) {
  switch (status) {
    case RunStatus::kFinished:
      return "FINISHED";
    case RunStatus::kFailed:
      return "FAILED";
    case RunStatus::kKilled:
      return "KILLED";
  }
  return "FAILED";
}

std::vector<std::pair<std::string, std::string>> stage_tags(const train::TrainingConfig& config) {
  std::string fingerprint = "unknown";
  try {
    // Never blocks on a FIFO or reads a device without end.
    if (const auto text = util::read_file_if_readable(config.run.store / "manifest.json"))
      fingerprint = util::parse_json(*text).value("manifest_xxh3", fingerprint);
  } catch (const std::exception&) {
    // A store without a readable manifest fails the stage itself; the tag only says "unknown".
  }
  nlohmann::json flat = config;
  return {{"dataset", train::dataset_name(config)},
          {"store", config.run.store.string()},
          {"store_fingerprint", fingerprint},
          {"stage", flat.value("stage", std::string())},
          {"model", flat.value("model", std::string())},
          {"size", flat.value("size", std::string())},
          {"device", config.run.device},
          {"headroom_version", HEADROOM_VERSION},
          {"headroom_commit", HEADROOM_COMMIT},
          {"mlflow.source.name", "headroom"}};
}

// The background thread that talks to the server, and the queue between it and training.
class MlflowTracker::Worker {
 public:
  Worker(MlflowOptions options, std::ostream& warnings)
      : options_(std::move(options)), warnings_(warnings) {
    while (!options_.uri.empty() && options_.uri.back() == '/') options_.uri.pop_back();
    shown_uri_ = util::printable(without_user_info(options_.uri));
    user_info_ = user_info_of(options_.uri);
    struct sigaction action {};
    action.sa_handler = remember_signal;
    sigemptyset(&action.sa_mask);
    caught_signal.store(0);
    sigaction(SIGINT, &action, &previous_interrupt_);
    sigaction(SIGTERM, &action, &previous_terminate_);
    thread_ = std::thread([this] { loop(); });
  }

  ~Worker() {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
      deadline_ = Clock::now() + options_.shutdown_grace;
      http_.abort_after(deadline_);  // a request waiting on a hung server ends with the grace
    }
    wake_.notify_all();
    thread_.join();
    sigaction(SIGINT, &previous_interrupt_, nullptr);
    sigaction(SIGTERM, &previous_terminate_, nullptr);
    if (undelivered_ > 0)
      warnings_ << fmt::format(
          "headroom: MLflow: {} tracking updates were not delivered to {}; the run directory's "
          "metrics.jsonl has every metric line\n",
          undelivered_.load(), shown_uri_);
  }

  int create_run(const std::string& name, int parent, Pairs tags) {
    std::lock_guard lock(mutex_);
    const int run = next_run_++;
    Operation op;
    op.kind = Operation::Kind::kCreateRun;
    op.run = run;
    op.parent = parent;
    op.text = name;
    op.tags = std::move(tags);
    op.time_ms = now_ms();
    enqueue(std::move(op));
    open_runs_.push_back(run);
    return run;
  }

  void log_params(int run, const Pairs& params) {
    std::lock_guard lock(mutex_);
    for (std::size_t begin = 0; begin < params.size(); begin += kMaxParamsPerBatch) {
      Operation op;
      op.run = run;
      const auto end = std::min(params.size(), begin + kMaxParamsPerBatch);
      for (auto i = begin; i < end; ++i)
        op.params.emplace_back(params[i].first, truncated(params[i].second, kMaxParamValue));
      enqueue(std::move(op));
    }
  }

  void log_metrics(int run, const std::vector<Scalar>& scalars) {
    if (scalars.empty()) return;
    const auto timestamp = now_ms();
    std::lock_guard lock(mutex_);
    if (queued_metrics_ + scalars.size() > options_.max_queued_metrics) {
      undelivered_ += scalars.size();
      return;
    }
    for (const auto& scalar : scalars) {
      if (queue_.empty() || queue_.back().kind != Operation::Kind::kLog ||
          queue_.back().run != run || queue_.back().metrics.size() >= kMaxMetricsPerBatch ||
          (queue_.size() == 1 && sending_)) {
        Operation op;
        op.run = run;
        enqueue(std::move(op));
      }
      queue_.back().metrics.push_back({scalar.key, scalar.value, timestamp, scalar.step});
      ++queued_metrics_;
    }
    wake_.notify_one();
  }

  void log_artifact(int run, const std::string& artifact_path, std::string content) {
    std::lock_guard lock(mutex_);
    Operation op;
    op.kind = Operation::Kind::kArtifact;
    op.run = run;
    op.text = artifact_path;
    op.content = std::move(content);
    enqueue(std::move(op));
  }

  void set_tag(int run, const std::string& key, const std::string& value) {
    std::lock_guard lock(mutex_);
    Operation op;
    op.run = run;
    op.tags.emplace_back(key, truncated(value, kMaxTagValue));
    enqueue(std::move(op));
  }

  void end_run(int run, RunStatus status) {
    std::lock_guard lock(mutex_);
    end_run_locked(run, status);
  }

 private:
  // The run's id and artifact location on the server, once created (worker thread only).
  struct RunSlot {
    std::string id;
    std::string artifact_path;  // below /api/2.0/mlflow-artifacts/artifacts/; empty: none
    bool abandoned = false;     // creation failed for good: its updates are dropped
  };

  void enqueue(Operation op) {
    queue_.push_back(std::move(op));
    wake_.notify_one();
  }

  void end_run_locked(int run, RunStatus status) {
    const auto open = std::find(open_runs_.begin(), open_runs_.end(), run);
    if (open == open_runs_.end()) return;
    open_runs_.erase(open);
    Operation op;
    op.kind = Operation::Kind::kEndRun;
    op.run = run;
    op.text = run_status_name(status);
    op.time_ms = now_ms();
    enqueue(std::move(op));
  }

  void loop() {
    std::chrono::milliseconds backoff{0};
    std::unique_lock lock(mutex_);
    for (;;) {
      if (const int signal_number = caught_signal.exchange(0); signal_number != 0)
        begin_killed_shutdown(signal_number);
      if (queue_.empty()) {
        if (closing_) break;
        wake_.wait_for(lock, kSignalPoll);
        continue;
      }
      Operation op = queue_.front();
      sending_ = true;
      lock.unlock();
      const bool done = send(op);
      lock.lock();
      sending_ = false;
      if (done) {
        queued_metrics_ -= op.metrics.size();
        queue_.pop_front();
        backoff = std::chrono::milliseconds{0};
        // Training goes on producing metrics until the signal is re-raised: a busy server must
        // not keep the process alive past the grace. The statuses (first in the queue) each get
        // their one try even when a slow request ate the grace.
        if (killed_by_ != 0 && Clock::now() > deadline_ &&
            (queue_.empty() || queue_.front().kind == Operation::Kind::kLog ||
             queue_.front().kind == Operation::Kind::kArtifact)) {
          drop_queue();
          break;
        }
        continue;
      }
      backoff = std::clamp(backoff * 2, kFirstRetry, kLongestRetry);
      if (closing_ && Clock::now() + backoff > deadline_) {
        drop_queue();
        break;
      }
      wake_.wait_for(lock, std::min(backoff, kSignalPoll * 5));
    }
    if (killed_by_ != 0) {
      lock.unlock();
      std::signal(killed_by_, SIG_DFL);
      std::raise(killed_by_);
    }
  }

  // SIGINT/SIGTERM: every open run ends KILLED, the queue drains briefly, then the signal is
  // re-raised (end of loop()).
  void begin_killed_shutdown(int signal_number) {
    killed_by_ = signal_number;
    const std::vector<int> open(open_runs_.rbegin(), open_runs_.rend());  // children first
    for (const int run : open) end_run_locked(run, RunStatus::kKilled);
    // The KILLED statuses are what the grace is for: they go before the metrics still queued,
    // after the creations they need. Called between two sends, so nothing is in flight.
    std::stable_partition(queue_.begin(), queue_.end(), [](const Operation& op) {
      return op.kind == Operation::Kind::kCreateRun || op.kind == Operation::Kind::kEndRun;
    });
    const auto limit = Clock::now() + kSignalGrace;
    deadline_ = closing_ ? std::min(deadline_, limit) : limit;
    http_.abort_after(deadline_);
    closing_ = true;
  }

  void drop_queue() {
    for (const auto& op : queue_) undelivered_ += std::max<std::size_t>(1, op.metrics.size());
    queue_.clear();
    queued_metrics_ = 0;
  }

  // Sends one operation. True when it is done with (delivered, or refused for good: dropped);
  // false when it is worth retrying.
  bool send(const Operation& op) {
    try {
      if (op.kind == Operation::Kind::kCreateRun) return create(op);
      auto& slot = slot_of(op.run);
      if (slot.abandoned || slot.id.empty()) {  // its creation was refused for good
        note_dropped(op);
        return true;
      }
      switch (op.kind) {
        case Operation::Kind::kLog:
          post("runs/log-batch", batch_body(slot, op));
          break;
        case Operation::Kind::kArtifact:
          upload(slot, op);
          break;
        case Operation::Kind::kEndRun:
          post("runs/update", {{"run_id", slot.id}, {"status", op.text}, {"end_time", op.time_ms}});
          break;
        case Operation::Kind::kCreateRun:
          break;
      }
      return true;
    } catch (const HttpTransportError& e) {
      warn_once(e.what());
      return false;
    } catch (const nlohmann::json::exception& e) {  // an answer that is not MLflow's
      warn_once(std::string("unexpected answer: ") + e.what());
      if (op.kind == Operation::Kind::kCreateRun) slot_of(op.run).abandoned = true;
      note_dropped(op);
      return true;
    } catch (const ServerRefusal& refusal) {
      warn_once(refusal.reason);
      if (refusal.retry) return false;
      if (op.kind == Operation::Kind::kCreateRun) slot_of(op.run).abandoned = true;
      note_dropped(op);
      return true;
    }
  }

  bool create(const Operation& op) {
    if (experiment_id_.empty()) experiment_id_ = experiment_id();
    Pairs tags = op.tags;
    tags.emplace_back("mlflow.runName", op.text);
    if (op.parent >= 0 && !slot_of(op.parent).id.empty())
      tags.emplace_back("mlflow.parentRunId", slot_of(op.parent).id);
    for (auto& [key, value] : tags) value = truncated(value, kMaxTagValue);
    const auto answer = post("runs/create", {{"experiment_id", experiment_id_},
                                             {"run_name", op.text},
                                             {"start_time", op.time_ms},
                                             {"tags", key_values(tags)}});
    auto& slot = slot_of(op.run);
    const auto& info = answer.at("run").at("info");
    slot.id = info.at("run_id").get<std::string>();
    // A server that proxies artifacts names them mlflow-artifacts:/<experiment>/<run>/artifacts.
    constexpr std::string_view kProxied = "mlflow-artifacts:";
    const auto uri = info.value("artifact_uri", std::string());
    if (uri.starts_with(kProxied)) {
      slot.artifact_path = uri.substr(kProxied.size());
      while (!slot.artifact_path.empty() && slot.artifact_path.front() == '/')
        slot.artifact_path.erase(0, 1);
    }
    return true;
  }

  std::string experiment_id() {
    const auto found = http_.request(
        "GET", api("experiments/get-by-name?experiment_name=" + http_.escape(options_.experiment)));
    if (found.status == 200)
      return util::parse_json(found.body).at("experiment").at("experiment_id").get<std::string>();
    if (found.status != 404) refuse("experiments/get-by-name", found);
    // Created here; a concurrent creator makes this fail once, and the retry finds it.
    const auto created = post("experiments/create", {{"name", options_.experiment}}, true);
    return created.at("experiment_id").get<std::string>();
  }

  nlohmann::json batch_body(const RunSlot& slot, const Operation& op) {
    auto metrics = nlohmann::json::array();
    for (const auto& m : op.metrics)
      metrics.push_back(
          {{"key", m.key}, {"value", m.value}, {"timestamp", m.timestamp_ms}, {"step", m.step}});
    return {{"run_id", slot.id},
            {"metrics", metrics},
            {"params", key_values(op.params)},
            {"tags", key_values(op.tags)}};
  }

  void upload(const RunSlot& slot, const Operation& op) {
    if (slot.artifact_path.empty()) {
      warn_once(
          "the server does not serve artifacts (start it with --serve-artifacts); "
          "artifacts are not uploaded");
      return;
    }
    const auto url = options_.uri + "/api/2.0/mlflow-artifacts/artifacts/" + slot.artifact_path +
                     "/" + http_.escape(op.text);
    const auto answer = http_.request("PUT", url, op.content, "application/octet-stream");
    if (answer.status / 100 != 2) refuse("artifact " + op.text, answer);
  }

  nlohmann::json post(const std::string& endpoint, const nlohmann::json& body,
                      bool retry_on_conflict = false) {
    const auto answer = http_.request("POST", api(endpoint), body.dump());
    if (answer.status / 100 != 2) refuse(endpoint, answer, retry_on_conflict);
    return answer.body.empty() ? nlohmann::json::object() : util::parse_json(answer.body);
  }

  [[noreturn]] void refuse(const std::string& what, const HttpResponse& answer,
                           bool retry_anyway = false) {
    std::string message = answer.body;
    try {
      message = util::parse_json(answer.body).value("message", answer.body);
    } catch (const nlohmann::json::exception&) {
      // not JSON (a proxy's error page): the body as it is
    }
    throw ServerRefusal{
        fmt::format("{} answered HTTP {}: {}", what, answer.status, truncated(message, 300)),
        retry_anyway || answer.status == 429 || answer.status >= 500};
  }

  std::string api(const std::string& endpoint) const {
    return options_.uri + "/api/2.0/mlflow/" + endpoint;
  }

  RunSlot& slot_of(int run) {
    if (static_cast<std::size_t>(run) >= runs_.size()) runs_.resize(run + 1);
    return runs_[run];
  }

  void note_dropped(const Operation& op) {
    undelivered_ += std::max<std::size_t>(1, op.metrics.size());
  }

  // `reason` may quote a URL or the server's answer: printed without the URI's credentials (should
  // the server echo them) and escaped.
  void warn_once(std::string reason) {
    if (warned_.exchange(true)) return;
    if (!user_info_.empty())
      for (auto at = reason.find(user_info_); at != std::string::npos;
           at = reason.find(user_info_, at + 3))
        reason.replace(at, user_info_.size(), "***");
    warnings_ << fmt::format(
        "headroom: warning: MLflow tracking at {}: {}; training goes on, tracking updates are "
        "buffered and retried\n",
        shown_uri_, util::printable(reason));
    warnings_.flush();
  }

  MlflowOptions options_;
  std::string shown_uri_;  // options_.uri as printed: without its user info, escaped
  std::string user_info_;  // options_.uri's credentials, never printed
  std::ostream& warnings_;
  HttpClient http_{options_.timeouts};
  std::atomic<bool> warned_{false};

  std::mutex mutex_;  // guards everything below down to the thread
  std::condition_variable wake_;
  std::deque<Operation> queue_;
  std::size_t queued_metrics_ = 0;
  bool sending_ = false;  // the front operation is being sent: log_metrics must not grow it
  bool closing_ = false;
  Clock::time_point deadline_{};
  std::vector<int> open_runs_;  // created and not yet ended, in creation order
  int next_run_ = 0;
  int killed_by_ = 0;

  // Operations and metric points that never reached the server (counted with and without mutex_).
  std::atomic<std::size_t> undelivered_{0};
  std::string experiment_id_;  // worker thread only
  std::vector<RunSlot> runs_;  // worker thread only, by handle
  struct sigaction previous_interrupt_ {};
  struct sigaction previous_terminate_ {};
  std::thread thread_;  // last: starts once everything above exists
};

// A stage's metric lines, as scalars of its run.
class MlflowTracker::StageSink final : public train::MetricsSink {
 public:
  StageSink(Worker& worker, int run) : worker_(worker), run_(run) {}
  void record(const nlohmann::json& line) override { worker_.log_metrics(run_, scalars_.of(line)); }

 private:
  Worker& worker_;
  int run_;
  MetricScalars scalars_;
};

MlflowTracker::MlflowTracker(MlflowOptions options, std::ostream& warnings)
    : worker_(std::make_unique<Worker>(std::move(options), warnings)) {}

MlflowTracker::~MlflowTracker() {
  if (stage_ >= 0) worker_->end_run(stage_, RunStatus::kFailed);
  if (parent_ >= 0) worker_->end_run(parent_, RunStatus::kFailed);
  worker_.reset();  // drains within the grace period
}

void MlflowTracker::start_parent(const std::string& name, const train::TrainingConfig& config) {
  parent_ = worker_->create_run(name, -1, stage_tags(config));
  worker_->log_params(parent_, flatten_to_strings(nlohmann::json(config)));
}

void MlflowTracker::log_parent_artifact(const std::filesystem::path& file) {
  if (parent_ < 0) return;
  if (auto content = util::read_file_if_readable(file))
    worker_->log_artifact(parent_, file.filename().string(), std::move(*content));
}

void MlflowTracker::end_parent(RunStatus status) {
  if (parent_ < 0) return;
  worker_->end_run(parent_, status);
  parent_ = -1;
}

std::vector<train::MetricsSink*> MlflowTracker::stage_started(
    const std::string& name, const train::TrainingConfig& config,
    const std::filesystem::path& run_dir) {
  stage_ = worker_->create_run(name, parent_, stage_tags(config));
  worker_->log_params(stage_, flatten_to_strings(nlohmann::json(config)));
  stage_dir_ = run_dir;
  sinks_.push_back(std::make_unique<StageSink>(*worker_, stage_));
  return {sinks_.back().get()};
}

void MlflowTracker::stage_ended(std::string_view error) {
  if (stage_ < 0) return;
  // config.json, result.json, and an evaluation's per-model JSON files.
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(stage_dir_, ec))
    if (entry.path().extension() == ".json")
      if (auto content = util::read_file_if_readable(entry.path()))
        worker_->log_artifact(stage_, entry.path().filename().string(), std::move(*content));
  if (!error.empty()) worker_->set_tag(stage_, "error", std::string(error));
  worker_->end_run(stage_, error.empty() ? RunStatus::kFinished : RunStatus::kFailed);
  stage_ = -1;
}

namespace {

constexpr SinkFlag kMlflowFlags[] = {
    {.name = "--mlflow-uri",
     .environment = "MLFLOW_TRACKING_URI",
     .help = "MLflow tracking server (http://host:port): each stage becomes a run there"},
    {.name = "--mlflow-experiment",
     .environment = "MLFLOW_EXPERIMENT_NAME",
     .default_value = "headroom",
     .help = "MLflow experiment of the runs"},
};

OpenedSink open_mlflow(const SinkFlagValues& values, std::ostream& warnings) {
  const std::string uri(sink_flag_value(values, "--mlflow-uri"));
  if (uri.empty()) return {};
  if (!uri.starts_with("http://") && !uri.starts_with("https://"))
    throw std::invalid_argument(
        "--mlflow-uri must be an http:// or https:// tracking server, not '" +
        util::printable(without_user_info(uri)) + "'");
  // A password with '#', '/' or '?' unencoded reaches no server (the URL ends its authority
  // there), and would fail later with a message about a port or a host instead.
  if (user_info_of(uri).find_first_of("#/?") != std::string_view::npos)
    throw std::invalid_argument(
        "--mlflow-uri '" + util::printable(without_user_info(uri)) +
        "': its user name or password holds '#', '/' or '?'; percent-encode them (%23, %2F, %3F)");
  MlflowOptions options;
  options.uri = uri;
  if (const auto experiment = sink_flag_value(values, "--mlflow-experiment"); !experiment.empty())
    options.experiment = experiment;
  auto tracker = std::make_unique<MlflowTracker>(std::move(options), warnings);
  ParentRun* parent = tracker.get();
  return {std::move(tracker), parent};
}

}  // namespace

const TrackingSinkDefinition& mlflow_tracking_sink() {
  static const TrackingSinkDefinition definition{
      .name = "mlflow", .flags = kMlflowFlags, .open = &open_mlflow};
  return definition;
}

}  // namespace headroom::tracking
