// Peak measurement of one steady-state step, and the probe batches it is measured on: the samples
// that fit_peak (peak_model.hpp) turns into the packer's byte-cost model. The step itself comes
// from the caller (train/step/step_probe.hpp builds the stage's real one).
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "headroom/memory/peak_model.hpp"
#include "headroom/store/graph_store.hpp"

namespace headroom::memory {

// The graph-id sets `headroom plan` and the packer probe: batches of one size class each (the
// smallest, median, 95th-percentile and largest training graphs by node count, read from the
// store's size index) at two batch sizes, and one shuffled mixed batch, so that the fit sees
// batches whose nodes, edges and graphs do not grow in proportion. No set is larger than
// `max_graphs` or holds an id twice; there are at least two sets (repeated when the training split
// is tiny). Throws std::invalid_argument when the store has no training graphs or max_graphs < 1.
std::vector<std::vector<std::uint32_t>> probe_batches(const store::GraphStore& store,
                                                      std::int64_t max_graphs);
// The same drawn from `candidates` (ids of the store, e.g. the normal training graphs an
// autoencoder trains on) instead of every training graph. Throws std::invalid_argument when
// `candidates` is empty.
std::vector<std::vector<std::uint32_t>> probe_batches(const store::GraphStore& store,
                                                      std::int64_t max_graphs,
                                                      std::span<const std::uint32_t> candidates);

// The steady-state peak of one step, in bytes: `warm_up` runs once unmeasured (so that state a
// step creates once, like an optimiser's moment buffers, exists as in steady-state training),
// then the device's peak counter is reset to what is live and `step` runs once. The peak is the
// counting CPU allocator's peak_bytes on CPU (installed here) or the CUDA caching allocator's
// peak_allocated_bytes (the device is synchronised around the step); either way it includes
// everything live during the step, the parameters and the batch included. memory/ knows nothing
// of what a step does: train/step/step_probe.hpp hands it the stage's real training step.
// Mutates the process-wide peak counters; not to be run concurrently with training.
std::int64_t measure_peak_bytes(const c10::Device& device, const std::function<void()>& warm_up,
                                const std::function<void()>& step);

}  // namespace headroom::memory
