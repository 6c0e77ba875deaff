// How a stage cuts an epoch into batches. Without a memory budget: `batch_size` graphs each.
// With one (--memory-budget): the step's peak is measured on probe batches and fitted as
// a + b*nodes + c*edges + d*graphs (memory/peak_model.hpp), and each epoch is packed by predicted
// bytes up to target_utilization x budget (memory/batch_packer.hpp), with batch_size as a cap.
// The OOM guard catches what the prediction misses.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "headroom/memory/peak_model.hpp"
#include "headroom/memory/peak_probe.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/run_directory.hpp"
#include "headroom/train/training_config.hpp"

namespace headroom::train {

struct BatchSizing {
  std::optional<memory::PeakFit> fit;  // set when packing by bytes
  double packing_budget_bytes = 0;     // target_utilization x memory_budget
  std::int64_t max_graphs = 0;         // the batch_size cap
};

// Measures the training step's peak on probe batches of 16, 64, 256 and 1024 graphs (capped by
// batch_size and the training split) and fits it; `probe_sizes` receives the sizes used. Leaves
// the default random generator as it found it.
memory::PeakFit measure_step_peak(const TrainingConfig& config, const store::GraphStore& store,
                                  const memory::ProbeModelConfig& model,
                                  std::vector<std::int64_t>* probe_sizes = nullptr);

// Probes and fits when config.memory_budget > 0 (logged in `run`); otherwise graph-count batches.
BatchSizing plan_batch_sizing(const TrainingConfig& config, const store::GraphStore& store,
                              const memory::ProbeModelConfig& model, RunDirectory& run);

// The epoch's batches, in the given order.
std::vector<std::vector<std::uint32_t>> make_batches(const BatchSizing& sizing,
                                                     const store::GraphStore& store,
                                                     const std::vector<std::uint32_t>& ordered_ids);

}  // namespace headroom::train
