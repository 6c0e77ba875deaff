// How a stage cuts an epoch into batches. The memory budget (--memory-budget; default: the GPU's
// memory, or on CPU what the host memory budget leaves) is planned, not guessed: the step's peak is
// measured on probe batches and fitted as a + b*nodes + c*edges + d*graphs (memory/peak_model.hpp),
// the fit is cached on disk (memory/peak_fit_cache.hpp), and each epoch is packed by predicted
// bytes up to target_utilization x budget (memory/batch_packer.hpp), with batch_size as a cap. The
// OOM guard catches what the prediction misses. With --pack-batches false: batch_size graphs per
// batch.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/memory/peak_model.hpp"
#include "headroom/memory/peak_probe.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/batches/inference_batching.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_context.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/step/step_probe.hpp"

namespace headroom::train {

struct BatchSizing {
  std::optional<memory::PeakFit> fit;  // set when packing by bytes
  double packing_budget_bytes = 0;     // target_utilization x memory budget
  std::int64_t max_graphs = 0;         // the batch_size cap
};

struct MeasuredPeak {
  memory::PeakFit fit;
  std::vector<memory::PeakSample> samples;
  std::filesystem::path cache_file;  // read or written (empty: the cache is disabled)
  bool from_cache = false;
  // Probe batches the budget refused (each then probed on its first half). The static estimate
  // sizes the probe batches so that this stays 0 whenever the estimate holds.
  std::int64_t probe_oom_events = 0;
};

// What the probes measure of a stage: the training step it will run (one optimiser step, as
// TrainingStep runs it) on fresh subjects with the stage's own loss, and the objective's name in
// the fit's cache key ("plain": cross-entropy or the autoencoder's loss; "distillation": the
// student's distillation loss with its teacher inputs).
struct ProbeTarget {
  ProbeSubjectFactory make;
  std::string objective = "plain";
  // The graphs the stage trains on, which the probe batches are drawn from (empty: every
  // training graph), and their name in the cache key ("train", "normal training graphs").
  std::vector<std::uint32_t> population;
  std::string population_name = "train";
};

// The probe settings of `config`'s training step: `context`'s device and precision, the optimiser.
PeakProbeOptions probe_options(const TrainingConfig& config, const RunContext& context);

// What a training step's peak depends on, beyond the batch: the cache key of its fit.
nlohmann::json peak_fit_key(const TrainingConfig& config, const RunContext& context,
                            const ModelSpec& model,
                            const std::vector<std::vector<std::uint32_t>>& probe_batches,
                            std::string_view objective = "plain",
                            std::string_view population = "train");

// The peak fit of `step` (a stage's model `model` and loss) under `config` (device, precision,
// optimiser settings): from the on-disk cache when this key was measured before, else measured
// on memory::probe_batches (capped by batch_size) and stored. Leaves the default random
// generators as it found them.
MeasuredPeak measure_step_peak(const TrainingConfig& config, const RunContext& context,
                               const store::GraphStore& store, const ModelSpec& model,
                               const ProbeTarget& step);
// The same for the plain objective of `model` (headroom plan, the benchmarks).
MeasuredPeak measure_step_peak(const TrainingConfig& config, const RunContext& context,
                               const store::GraphStore& store, const ModelSpec& model);

// The step's fit and packing budget as every rank uses them: measured (or read from the cache) by
// rank 0 and broadcast, the budget context.packing_budget_bytes() less `reserved_bytes` (see
// plan_batch_sizing). What plan_batch_sizing packs with, without logging or recording it.
struct AgreedStepPeak {
  MeasuredPeak measured;
  double packing_budget_bytes = 0;
};
AgreedStepPeak agreed_step_peak(const TrainingConfig& config, const RunContext& context,
                                const store::GraphStore& store, const ModelSpec& model,
                                const ProbeTarget& step, double reserved_bytes = 0);

// Packing by bytes, up to context.packing_budget_bytes(), unless config.memory.pack_batches is
// false (logged in `run`). `reserved_bytes`:
// device memory held through training outside the step the fit measures (a distillation teacher
// kept in memory); it comes out of the packing budget. `measured`: this step's fit when the
// stage already holds it (the checkpointing choice measured it), used instead of measuring again.
BatchSizing plan_batch_sizing(const TrainingConfig& config, const RunContext& context,
                              const store::GraphStore& store, const ModelSpec& model,
                              const ProbeTarget& step, RunDirectory& run, double reserved_bytes = 0,
                              const MeasuredPeak* measured = nullptr);

// The limits of `config`'s inference passes (validation, evaluation, scoring): --eval-batch-size
// graphs at most, packed within the device budget unless --pack-batches is false
// (inference_batching.hpp).
InferenceLimits inference_limits(const TrainingConfig& config, const RunContext& context);

// The epoch's batches, in the given order.
std::vector<std::vector<std::uint32_t>> make_batches(const BatchSizing& sizing,
                                                     const store::GraphStore& store,
                                                     const std::vector<std::uint32_t>& ordered_ids);

}  // namespace headroom::train
