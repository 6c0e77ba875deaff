// The plain (undistilled) training step of a model of any family (a ModelSpec), probed: what
// `headroom plan`, the benchmarks and the planner's tests measure. The families wing, because the
// objective is the family's. Same process-wide effects as step/step_probe.hpp.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "headroom/memory/peak_model.hpp"
#include "headroom/memory/peak_probe.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/step/step_probe.hpp"

namespace headroom::train {

// The undistilled objective of a model (ModelFamily::plain_subject): cross-entropy on the graph
// labels for a classifier, the family's own loss for an autoencoder. What `headroom plan` and the
// benchmarks measure by default.
ProbeSubjectFactory plain_probe_subject(const ModelSpec& model);

// probe_step_peak with plain_probe_subject(model).
memory::PeakSample probe_training_peak(const store::GraphStore& store, const ModelSpec& model,
                                       std::span<const std::uint32_t> ids,
                                       const PeakProbeOptions& options = {});

// For each batch size N: the first N ids of the store's training ids (loader::shuffled order,
// seed 0, epoch 0), measured with probe_training_peak. Throws std::invalid_argument for a batch
// size outside 1..train_ids().size().
std::vector<memory::PeakSample> probe_training_peaks(const store::GraphStore& store,
                                                     const ModelSpec& model,
                                                     std::span<const std::int64_t> batch_sizes,
                                                     const PeakProbeOptions& options = {});

}  // namespace headroom::train
