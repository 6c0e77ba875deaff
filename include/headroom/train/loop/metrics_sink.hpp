// Where a training loop's metric lines go. metrics.jsonl in the run directory is one sink
// (MetricsFileSink); experiment trackers and tests add others through LoopHooks
// (training_loop.hpp). Sinks are called on the training thread, in order, and only in the process
// that writes (util/process_role.hpp).
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "headroom/train/context/run_directory.hpp"

namespace headroom::train {

class MetricsSink {
 public:
  virtual ~MetricsSink() = default;
  // One line: {"type": "epoch", "epoch": N, ...} after each epoch, or {"type": "step", ...}
  // memory samples between them (docs/configuration.md lists the fields).
  virtual void record(const nlohmann::json& line) = 0;
  // A resumed run redoes the epochs from `epochs_done` on: lines recorded for them before the
  // interruption are to be forgotten. Sinks that cannot forget may ignore it.
  virtual void rewind(std::int64_t epochs_done) { (void)epochs_done; }
};

// metrics.jsonl of a run directory: each line appended and fsynced; rewind keeps the finished
// epochs' lines. `run` must outlive the sink.
class MetricsFileSink final : public MetricsSink {
 public:
  explicit MetricsFileSink(RunDirectory& run) : run_(run) {}
  void record(const nlohmann::json& line) override { run_.append_metrics(line); }
  void rewind(std::int64_t epochs_done) override { run_.truncate_metrics(epochs_done); }

 private:
  RunDirectory& run_;
};

}  // namespace headroom::train
