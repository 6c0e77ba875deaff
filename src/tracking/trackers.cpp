#include "headroom/tracking/trackers.hpp"

#include "headroom/tracking/mlflow_tracker.hpp"
#include "headroom/tracking/tensorboard_writer.hpp"

namespace headroom::tracking {

// The registry: one line per sink, in the order their observers see a stage.
std::span<const TrackingSinkDefinition* const> tracking_sinks() {
  static const TrackingSinkDefinition* const sinks[] = {
      &mlflow_tracking_sink(),
      &tensorboard_tracking_sink(),
  };
  return sinks;
}

std::string_view sink_flag_value(const SinkFlagValues& values, std::string_view flag) {
  const auto found = values.find(flag);
  return found == values.end() ? std::string_view() : std::string_view(found->second);
}

Trackers::Trackers(const SinkFlagValues& values, std::ostream& warnings) {
  for (const auto* sink : tracking_sinks()) {
    auto opened = sink->open(values, warnings);
    if (!opened.observer) continue;
    observers_.push_back(opened.observer.get());
    if (opened.parent != nullptr) parents_.push_back(opened.parent);
    sinks_.push_back(std::move(opened.observer));
  }
}

Trackers::~Trackers() {
  // The last opened first, as members would be.
  while (!sinks_.empty()) sinks_.pop_back();
}

void Trackers::start_parent(const std::string& name, const train::TrainingConfig& config) {
  for (auto* parent : parents_) parent->start_parent(name, config);
}

void Trackers::log_parent_artifact(const std::filesystem::path& file) {
  for (auto* parent : parents_) parent->log_parent_artifact(file);
}

void Trackers::end_parent(RunStatus status) {
  for (auto* parent : parents_) parent->end_parent(status);
}

}  // namespace headroom::tracking
