// The experiment-tracking flags of the training subcommands and `headroom run`: every registered
// sink's (tracking/tracking_sink.hpp), today --mlflow-uri (or MLFLOW_TRACKING_URI),
// --mlflow-experiment (or MLFLOW_EXPERIMENT_NAME) and --tensorboard DIR.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>

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
  // Throws std::runtime_error when a directory these flags write (--tensorboard) is, holds or
  // lies inside `input` (what `input_what` names: "the store", "the dataset"): event files
  // written into a store or a dataset made headroom refuse its own store or dataset later.
  void require_outside(const std::filesystem::path& input, std::string_view input_what) const;
};

}  // namespace headroom::cli
