// The experiment trackers one command asked for (MLflow, TensorBoard), as one set of stage
// observers (train/loop/stage_observer.hpp), and the parent run that `headroom run` nests its
// stages under. Thread-safety: the training thread owns it.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "headroom/tracking/mlflow_tracker.hpp"
#include "headroom/tracking/tensorboard_writer.hpp"

namespace headroom::tracking {

struct TrackingOptions {
  std::optional<MlflowOptions> mlflow;    // none: no MLflow
  std::filesystem::path tensorboard_dir;  // empty: no TensorBoard files
};

class Trackers {
 public:
  // `warnings` (for the MLflow warning) must outlive the trackers.
  Trackers(const TrackingOptions& options, std::ostream& warnings);

  const train::StageObservers& observers() const { return observers_; }

  // MLflow only (TensorBoard has no runs to nest): see MlflowTracker.
  void start_parent(const std::string& name, const train::TrainingConfig& config);
  void log_parent_artifact(const std::filesystem::path& file);
  void end_parent(RunStatus status);

 private:
  std::unique_ptr<MlflowTracker> mlflow_;
  std::unique_ptr<TensorBoardObserver> tensorboard_;
  train::StageObservers observers_;
};

}  // namespace headroom::tracking
