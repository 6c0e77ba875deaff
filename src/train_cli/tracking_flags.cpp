#include "headroom/train_cli/tracking_flags.hpp"

#include <CLI/CLI.hpp>

#include "headroom/tracking/http_client.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/process_role.hpp"

namespace headroom::cli {

void TrackingFlags::add_to(CLI::App& command) {
  const std::string group = "Tracking";
  command
      .add_option("--mlflow-uri", mlflow_uri,
                  "MLflow tracking server (http://host:port): each stage becomes a run there")
      ->envname("MLFLOW_TRACKING_URI")
      ->group(group);
  command.add_option("--mlflow-experiment", mlflow_experiment, "MLflow experiment of the runs")
      ->envname("MLFLOW_EXPERIMENT_NAME")
      ->capture_default_str()
      ->group(group);
  command
      .add_option("--tensorboard", tensorboard_dir,
                  "Write TensorBoard event files of every stage's scalars under DIR/<stage>/")
      ->group(group);
}

std::unique_ptr<tracking::Trackers> TrackingFlags::open(std::ostream& warnings) const {
  tracking::TrackingOptions options;
  // In a data-parallel job only the rank that writes the run directories tracks: one MLflow run
  // and one set of event files per stage, not one per rank.
  if (!util::process_role().writes())
    return std::make_unique<tracking::Trackers>(options, warnings);
  if (!mlflow_uri.empty()) {
    if (!mlflow_uri.starts_with("http://") && !mlflow_uri.starts_with("https://"))
      throw std::invalid_argument(
          "--mlflow-uri must be an http:// or https:// tracking server, not '" +
          util::printable(tracking::without_user_info(mlflow_uri)) + "'");
    tracking::MlflowOptions mlflow;
    mlflow.uri = mlflow_uri;
    mlflow.experiment = mlflow_experiment;
    options.mlflow = mlflow;
  }
  options.tensorboard_dir = tensorboard_dir;
  return std::make_unique<tracking::Trackers>(options, warnings);
}

}  // namespace headroom::cli
