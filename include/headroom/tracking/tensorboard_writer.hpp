// TensorBoard for the training stages: one directory per stage under --tensorboard DIR, each
// holding an events file (tensorboard/event_file_writer.hpp) of the stage's scalars
// (metric_scalars.hpp). Thread-safety: none; the training thread owns the observer.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/tracking/tracking_sink.hpp"
#include "headroom/train/loop/stage_observer.hpp"

namespace headroom::tracking {

// A StageObserver that writes each stage's scalars to DIR/<stage name>/.
class TensorBoardObserver final : public train::StageObserver {
 public:
  explicit TensorBoardObserver(std::filesystem::path directory);
  ~TensorBoardObserver() override;
  std::vector<train::MetricsSink*> stage_started(const std::string& name,
                                                 const train::TrainingConfig& config,
                                                 const std::filesystem::path& run_dir) override;
  void stage_ended(std::string_view error) override;

 private:
  class StageSink;
  std::filesystem::path directory_;
  std::vector<std::unique_ptr<StageSink>> sinks_;  // alive until destruction
};

// The `tensorboard` entry of the sink registry (tracking_sink.hpp): --tensorboard DIR.
const TrackingSinkDefinition& tensorboard_tracking_sink();

}  // namespace headroom::tracking
