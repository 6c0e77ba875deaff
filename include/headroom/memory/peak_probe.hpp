// Measures the peak tensor memory of one steady-state training step at several batch sizes, the
// samples that fit_peak (peak_model.hpp) turns into the packer's byte-cost model.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <span>
#include <variant>
#include <vector>

#include "headroom/memory/peak_model.hpp"
#include "headroom/models/model_config.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/precision.hpp"

namespace headroom::memory {

// The model to probe: its kind is the alternative held.
using ProbeModelConfig = std::variant<models::GatConfig, models::VgaeConfig>;

// The preset of `kind` and `size` for `store` (num_ids = vocabulary size + 1).
ProbeModelConfig probe_model_preset(const store::GraphStore& store, models::ModelKind kind,
                                    models::ModelSize size);

struct PeakProbeOptions {
  c10::Device device = c10::Device(c10::kCPU);
  train::Precision precision = train::Precision::kFloat32;
  double learning_rate = 1e-3;
  double weight_decay = 1e-4;
  double gradient_clip = 1.0;  // 0: no clipping
};

// The graph-id sets `headroom plan` and the packer probe: batches of one size class each (the
// smallest, median, 95th-percentile and largest training graphs by node count, read from the
// store's size index) at two batch sizes, and one shuffled mixed batch, so that the fit sees
// batches whose nodes, edges and graphs do not grow in proportion. No set is larger than
// `max_graphs` or holds an id twice; there are at least two sets (repeated when the training split
// is tiny). Throws std::invalid_argument when the store has no training graphs or max_graphs < 1.
std::vector<std::vector<std::uint32_t>> probe_batches(const store::GraphStore& store,
                                                      std::int64_t max_graphs);

// The steady-state peak of one training step on the batch of `ids` (see probe_training_peaks for
// how it is measured). Installs the counting CPU allocator.
PeakSample probe_training_peak(const store::GraphStore& store, const ProbeModelConfig& model,
                               std::span<const std::uint32_t> ids,
                               const PeakProbeOptions& options = {});

// For each batch size N: the first N ids of the store's training ids (in loader::shuffled order
// with seed 0, epoch 0) collated into one batch; a fresh model and Adam optimizer; one warm-up
// step (so the optimizer's state exists, as in steady-state training); then the peak is reset and
// one more step (zero_grad, forward under autocast, loss, backward, clipping, step) is measured.
// The loss is cross-entropy on the graph labels for the GAT and train::vgae_loss for the VGAE.
// The peak is the counting CPU allocator's peak_bytes on CPU (the allocator is installed here) or
// the CUDA caching allocator's peak_allocated_bytes; either way it includes the parameters, the
// optimizer state and the batch itself. Each probe's model and optimizer are destroyed before the
// next one starts, so the peaks are independent.
//
// Mutates process-wide state: the peak counters, and the model's parameters are initialised from
// torch's global generator. Not to be run concurrently with training in the same process.
// Throws std::invalid_argument for a batch size that is not in 1..train_ids().size();
// c10::OutOfMemoryError propagates when a probe does not fit.
std::vector<PeakSample> probe_training_peaks(const store::GraphStore& store,
                                             const ProbeModelConfig& model,
                                             std::span<const std::int64_t> batch_sizes,
                                             const PeakProbeOptions& options = {});

}  // namespace headroom::memory
