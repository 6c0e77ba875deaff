#include "headroom/train/loop/training_outcome.hpp"

namespace headroom::train {

void to_json(nlohmann::json& json, const TrainingOutcome& o) {
  json = {{"epochs", o.epochs},
          {"best_epoch", o.best_epoch},
          {"best_validation_loss", o.best_validation_loss},
          {"early_stopped", o.early_stopped},
          {"resumed_after", o.resumed_after},
          {"seconds", o.seconds},
          {"batch_wait_seconds", o.batch_wait_seconds},
          {"graphs_per_second", o.graphs_per_second},
          {"peak_tensor_bytes", o.peak_tensor_bytes},
          {"best_metrics", o.best_metrics}};
}

void from_json(const nlohmann::json& json, TrainingOutcome& o) {
  o.epochs = json.at("epochs").get<std::int64_t>();
  o.best_epoch = json.at("best_epoch").get<std::int64_t>();
  o.best_validation_loss = json.at("best_validation_loss").get<double>();
  o.early_stopped = json.at("early_stopped").get<bool>();
  o.resumed_after = json.at("resumed_after").get<std::int64_t>();
  o.seconds = json.at("seconds").get<double>();
  o.batch_wait_seconds = json.at("batch_wait_seconds").get<double>();
  o.graphs_per_second = json.at("graphs_per_second").get<double>();
  o.peak_tensor_bytes = json.at("peak_tensor_bytes").get<std::int64_t>();
  o.best_metrics = json.at("best_metrics");
}

}  // namespace headroom::train
