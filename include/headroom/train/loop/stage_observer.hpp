// Who watches a command's stages from outside the training loop: experiment trackers (MLflow,
// TensorBoard). The loop knows only metrics sinks (metrics_sink.hpp); an observer hands each
// stage the sinks it wants that stage's lines in, and hears when the stage ends. Called on the
// training thread, in stage order; an observer must not throw (a tracker that fails reports it
// itself and lets training go on).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/train/config/training_config.hpp"
#include "headroom/train/loop/metrics_sink.hpp"
#include "headroom/train/loop/training_loop.hpp"

namespace headroom::train {

class StageObserver {
 public:
  virtual ~StageObserver() = default;
  // Stage `name` (its run-directory name, e.g. "teacher_curriculum") is about to run with
  // `config` in `run_dir`. The returned sinks (owned by the observer) receive its metric lines
  // until stage_ended.
  virtual std::vector<MetricsSink*> stage_started(const std::string& name,
                                                  const TrainingConfig& config,
                                                  const std::filesystem::path& run_dir) = 0;
  // The stage begun last has ended: `error` is empty when it succeeded, else what it threw.
  virtual void stage_ended(std::string_view error) = 0;
};

using StageObservers = std::vector<StageObserver*>;  // not owned; outlive the stages

// Runs `stage` between stage_started and stage_ended on every observer, with the observers'
// sinks added to `hooks.metrics`; rethrows what `stage` throws after telling the observers.
template <typename Stage>
auto observed_stage(const StageObservers& observers, const std::string& name,
                    const TrainingConfig& config, const std::filesystem::path& run_dir,
                    LoopHooks hooks, Stage&& stage) {
  for (auto* observer : observers)
    for (auto* sink : observer->stage_started(name, config, run_dir)) hooks.metrics.push_back(sink);
  try {
    auto result = stage(hooks);
    for (auto* observer : observers) observer->stage_ended({});
    return result;
  } catch (const std::exception& e) {
    for (auto* observer : observers) observer->stage_ended(e.what());
    throw;
  }
}

}  // namespace headroom::train
