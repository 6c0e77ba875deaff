// The tracking sinks (MLflow, TensorBoard) as a registry: each sink is defined beside its observer
// (its name, the flags it reads and how it opens) and listed once in trackers.cpp. The training
// commands offer every sink's flags (train_cli/tracking_flags.hpp) and `Trackers` opens the sinks
// the given values ask for, so a new sink is its observer, its definition and one line.
//
// Thread-safety: definitions are immutable; a sink is owned by the training thread.
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "headroom/train/loop/stage_observer.hpp"

namespace headroom::tracking {

enum class RunStatus { kFinished, kFailed, kKilled };
const char* run_status_name(RunStatus status);  // "FINISHED", "FAILED", "KILLED"

// One command-line flag of a sink (a string option of every training command and `run`).
struct SinkFlag {
  std::string_view name{};           // "--mlflow-uri"
  std::string_view environment{};    // read when the flag is not given; empty: none
  std::string_view default_value{};  // shown in --help when not empty
  std::string_view help{};
};

// The values of the sinks' flags, by flag name. A flag missing here reads as empty.
using SinkFlagValues = std::map<std::string, std::string, std::less<>>;
std::string_view sink_flag_value(const SinkFlagValues& values, std::string_view flag);

// A run that `headroom run` nests its stages under (MLflow's); sinks without runs have none.
class ParentRun {
 public:
  virtual ~ParentRun() = default;
  // Opens the parent run, with `config` (the command's base configuration) as its params.
  virtual void start_parent(const std::string& name, const train::TrainingConfig& config) = 0;
  // Attaches `file` (read now) to the parent run; a missing file is skipped.
  virtual void log_parent_artifact(const std::filesystem::path& file) = 0;
  virtual void end_parent(RunStatus status) = 0;
};

// What opening a sink gives: its observer (null when the values do not ask for this sink), and
// the same object as a ParentRun when the sink has runs.
struct OpenedSink {
  std::unique_ptr<train::StageObserver> observer;
  ParentRun* parent = nullptr;  // owned by `observer`
};

struct TrackingSinkDefinition {
  std::string_view name{};  // "mlflow", "tensorboard"
  std::span<const SinkFlag> flags{};
  // Opens the sink when `values` ask for it (its main flag set), else returns an empty OpenedSink.
  // Throws std::invalid_argument for a bad value, naming the flag. `warnings` outlives the sink.
  OpenedSink (*open)(const SinkFlagValues& values, std::ostream& warnings) = nullptr;
};

// The registered sinks, in the order their observers see a stage (trackers.cpp).
std::span<const TrackingSinkDefinition* const> tracking_sinks();

}  // namespace headroom::tracking
