// The experiment-tracking flags of the training subcommands and `headroom run`: every registered
// sink's (tracking/tracking_sink.hpp), today --mlflow-uri (or MLFLOW_TRACKING_URI),
// --mlflow-experiment (or MLFLOW_EXPERIMENT_NAME) and --tensorboard DIR.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>

#include "headroom/tracking/trackers.hpp"

namespace CLI {
class App;
}

namespace headroom::cli {

struct TrackingFlags {
  // Every registered sink's flags (tracking/tracking_sink.hpp), by name, as given.
  tracking::SinkFlagValues values;

  // Offers every sink's flags in the "Tracking" group.
  void add_to(CLI::App& command);
  // The trackers these flags ask for (an empty set when none is given, or when this process is
  // not the writing rank of a data-parallel job: call after joining it); warnings go to
  // `warnings`, which must outlive them.
  std::unique_ptr<tracking::Trackers> open(std::ostream& warnings) const;
};

}  // namespace headroom::cli
