// What one training run achieved, as run_budgeted_training returns it and result.json records it.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

namespace headroom::train {

struct TrainingOutcome {
  std::int64_t epochs = 0;  // epochs completed
  std::int64_t best_epoch = -1;
  double best_validation_loss = 0;
  bool early_stopped = false;
  std::int64_t resumed_after = 0;      // epochs restored from last.pt (0: fresh start)
  bool already_complete = false;       // the run directory held a finished run with this config
  double seconds = 0;                  // training wall time of this invocation
  double batch_wait_seconds = 0;       // time steps waited for a collated batch, summed
  double graphs_per_second = 0;        // training graphs per second of training-step time
  std::int64_t peak_tensor_bytes = 0;  // highest per-epoch peak (CPU counting allocator or CUDA)
  nlohmann::json best_metrics;         // the validation metrics of the best epoch
};
void to_json(nlohmann::json& json, const TrainingOutcome& outcome);
void from_json(const nlohmann::json& json, TrainingOutcome& outcome);

}  // namespace headroom::train
