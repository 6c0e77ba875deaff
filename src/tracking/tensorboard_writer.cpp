#include "headroom/tracking/tensorboard_writer.hpp"

#include <fmt/format.h>
#include <chrono>
#include <stdexcept>

#include "headroom/tensorboard/event_file_writer.hpp"
#include "headroom/tracking/metric_scalars.hpp"
#include "headroom/util/directory_argument.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::tracking {
namespace {

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

class TensorBoardObserver::StageSink final : public train::MetricsSink {
 public:
  explicit StageSink(const std::filesystem::path& directory) : writer_(directory) {}
  void record(const nlohmann::json& line) override {
    const double now = unix_seconds();
    for (const auto& scalar : scalars_.of(line))
      writer_.add_scalar(scalar.key, scalar.value, scalar.step, now);
  }

 private:
  tensorboard::EventFileWriter writer_;
  MetricScalars scalars_;
};

TensorBoardObserver::TensorBoardObserver(std::filesystem::path directory)
    : directory_(std::move(directory)) {}

TensorBoardObserver::~TensorBoardObserver() = default;

std::vector<train::MetricsSink*> TensorBoardObserver::stage_started(
    const std::string& name, const train::TrainingConfig& /*config*/,
    const std::filesystem::path& /*run_dir*/) {
  sinks_.push_back(std::make_unique<StageSink>(directory_ / name));
  return {sinks_.back().get()};
}

void TensorBoardObserver::stage_ended(std::string_view /*error*/) {}

namespace {

constexpr SinkFlag kTensorBoardFlags[] = {
    {.name = "--tensorboard",
     .help = "Write TensorBoard event files of every stage's scalars under DIR/<stage>/"},
};

OpenedSink open_tensorboard(const SinkFlagValues& values, std::ostream& /*warnings*/) {
  const auto directory = sink_flag_value(values, "--tensorboard");
  if (directory.empty()) return {};
  // The event files go into DIR/<stage>/, created when a stage starts: say now if they cannot.
  util::require_directory_or_absent(directory,
                                    fmt::format("--tensorboard {}", util::printable(directory)));
  return {std::make_unique<TensorBoardObserver>(std::filesystem::path(directory)), nullptr};
}

}  // namespace

const TrackingSinkDefinition& tensorboard_tracking_sink() {
  static const TrackingSinkDefinition definition{
      .name = "tensorboard", .flags = kTensorBoardFlags, .open = &open_tensorboard};
  return definition;
}

}  // namespace headroom::tracking
