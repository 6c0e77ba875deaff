#include "headroom/tracking/trackers.hpp"

namespace headroom::tracking {

Trackers::Trackers(const TrackingOptions& options, std::ostream& warnings) {
  if (options.mlflow) {
    mlflow_ = std::make_unique<MlflowTracker>(*options.mlflow, warnings);
    observers_.push_back(mlflow_.get());
  }
  if (!options.tensorboard_dir.empty()) {
    tensorboard_ = std::make_unique<TensorBoardObserver>(options.tensorboard_dir);
    observers_.push_back(tensorboard_.get());
  }
}

void Trackers::start_parent(const std::string& name, const train::TrainingConfig& config) {
  if (mlflow_) mlflow_->start_parent(name, config);
}

void Trackers::log_parent_artifact(const std::filesystem::path& file) {
  if (mlflow_) mlflow_->log_parent_artifact(file);
}

void Trackers::end_parent(RunStatus status) {
  if (mlflow_) mlflow_->end_parent(status);
}

}  // namespace headroom::tracking
