// MLflow tracking through its REST API (/api/2.0/mlflow/...): each stage is an MLflow run in one
// experiment, optionally nested under a parent run (`headroom run`); params are the stage's whole
// configuration, tags say what ran where, metrics are the loop's scalars (metric_scalars.hpp),
// artifacts the run directory's JSON files.
//
// Training never waits for the server: every call only queues work for a background thread,
// which sends it in batches, retries while the server is down, slow or answering errors, and
// prints one warning the first time something fails. The queue is bounded (metric points beyond
// it are dropped and counted). Destruction drains the queue for at most a grace period, then
// drops what is left and says how much.
//
// Runs end FINISHED when their stage succeeded, FAILED when it threw (or the tracker is destroyed
// while they are open, i.e. the command threw), and KILLED when SIGINT or SIGTERM arrives while
// the tracker lives: it then ends the open runs (within a short grace) and re-raises the signal
// with its default action, so the process still dies of it.
//
// Thread-safety: the public member functions are called from one thread (the training thread).
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "headroom/tracking/http_client.hpp"
#include "headroom/tracking/tracking_sink.hpp"
#include "headroom/train/loop/stage_observer.hpp"

namespace headroom::tracking {

struct MlflowOptions {
  std::string uri;                      // http(s)://host:port of the tracking server
  std::string experiment = "headroom";  // created when it does not exist
  HttpTimeouts timeouts;                // of each request
  // How long destruction waits for queued work to reach a server that does not answer.
  std::chrono::milliseconds shutdown_grace{5000};
  std::size_t max_queued_metrics = 200000;  // metric points waiting to be sent, at most
};

// The tags a stage's run carries besides mlflow.runName: dataset, store fingerprint (the
// manifest's checksum), stage, model, device, headroom version and commit.
std::vector<std::pair<std::string, std::string>> stage_tags(const train::TrainingConfig& config);

class MlflowTracker final : public train::StageObserver, public ParentRun {
 public:
  // `warnings` receives the one warning and the closing note; it must outlive the tracker.
  explicit MlflowTracker(MlflowOptions options, std::ostream& warnings);
  ~MlflowTracker() override;
  MlflowTracker(const MlflowTracker&) = delete;
  MlflowTracker& operator=(const MlflowTracker&) = delete;

  // Opens the run that the stages started after it nest under, with `config` (the command's
  // base configuration) as its params and tags.
  void start_parent(const std::string& name, const train::TrainingConfig& config) override;
  // Uploads `file` (read now) as an artifact of the parent run; a missing file is skipped.
  void log_parent_artifact(const std::filesystem::path& file) override;
  // Ends the parent run. Without this call, destruction ends it FAILED.
  void end_parent(RunStatus status) override;

  std::vector<train::MetricsSink*> stage_started(const std::string& name,
                                                 const train::TrainingConfig& config,
                                                 const std::filesystem::path& run_dir) override;
  void stage_ended(std::string_view error) override;

 private:
  class Worker;
  class StageSink;
  std::unique_ptr<Worker> worker_;
  std::vector<std::unique_ptr<StageSink>> sinks_;  // each stage's, alive until destruction
  int parent_ = -1;                                // the parent run's handle, or -1
  int stage_ = -1;                                 // the open stage run's handle, or -1
  std::filesystem::path stage_dir_;
};

// The `mlflow` entry of the sink registry (tracking_sink.hpp): --mlflow-uri (or
// MLFLOW_TRACKING_URI), an http(s) server, and --mlflow-experiment (or MLFLOW_EXPERIMENT_NAME).
const TrackingSinkDefinition& mlflow_tracking_sink();

}  // namespace headroom::tracking
