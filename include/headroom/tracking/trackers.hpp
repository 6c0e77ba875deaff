// The experiment trackers one command asked for (the registered sinks its flags name), as one set
// of stage observers (train/loop/stage_observer.hpp), and the parent run that `headroom run` nests
// its stages under. Thread-safety: the training thread owns it.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "headroom/tracking/tracking_sink.hpp"

namespace headroom::tracking {

class Trackers {
 public:
  // Opens every registered sink (tracking_sink.hpp) that `values` ask for; none for empty values.
  // `warnings` (for the MLflow warning) must outlive the trackers. Throws std::invalid_argument
  // for a bad flag value, naming the flag.
  Trackers(const SinkFlagValues& values, std::ostream& warnings);
  ~Trackers();
  Trackers(const Trackers&) = delete;
  Trackers& operator=(const Trackers&) = delete;

  const train::StageObservers& observers() const { return observers_; }

  // The sinks with runs (MLflow) nest the stages started after start_parent under one run;
  // sinks without runs ignore these.
  void start_parent(const std::string& name, const train::TrainingConfig& config);
  void log_parent_artifact(const std::filesystem::path& file);
  void end_parent(RunStatus status);

 private:
  std::vector<std::unique_ptr<train::StageObserver>> sinks_;  // opened, in registry order
  std::vector<ParentRun*> parents_;                           // those of sinks_ with runs
  train::StageObservers observers_;
};

}  // namespace headroom::tracking
