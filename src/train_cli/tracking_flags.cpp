#include "headroom/train_cli/tracking_flags.hpp"

#include <CLI/CLI.hpp>

#include "headroom/util/output_path.hpp"
#include "headroom/util/process_role.hpp"

namespace headroom::cli {

void TrackingFlags::add_to(CLI::App& command) {
  for (const auto* sink : tracking::tracking_sinks()) {
    for (const auto& flag : sink->flags) {
      // std::map keeps its elements in place, so each option binds to its own value.
      auto& value =
          values.try_emplace(std::string(flag.name), std::string(flag.default_value)).first->second;
      auto* option = command.add_option(std::string(flag.name), value, std::string(flag.help))
                         ->group("Tracking");
      if (!flag.environment.empty()) option->envname(std::string(flag.environment));
      if (!flag.default_value.empty()) option->capture_default_str();
    }
  }
}

std::unique_ptr<tracking::Trackers> TrackingFlags::open(std::ostream& warnings) const {
  // In a data-parallel job only the rank that writes the run directories tracks: one MLflow run
  // and one set of event files per stage, not one per rank.
  if (!util::process_role().writes())
    return std::make_unique<tracking::Trackers>(tracking::SinkFlagValues{}, warnings);
  return std::make_unique<tracking::Trackers>(values, warnings);
}

void TrackingFlags::require_outside(const std::filesystem::path& input,
                                    std::string_view input_what) const {
  const auto tensorboard = values.find("--tensorboard");
  if (tensorboard != values.end() && !tensorboard->second.empty() && !input.empty())
    util::require_disjoint(tensorboard->second, "the TensorBoard directory (--tensorboard)", input,
                           input_what);
}

}  // namespace headroom::cli
