// The gradient hook of data-parallel training (train/step/training_step.hpp): after backward, every
// rank's gradients are replaced by the average over ranks weighted by each rank's batch (its
// graphs, or nodes for a per-node loss), so that every rank applies the gradient of the union of
// the step's batches: N ranks train like one process on N times the batch. The gradients travel
// in buckets (one flat tensor of up to `bucket_bytes` per all-reduce) rather than one collective
// per parameter.
#pragma once

#include <cstdint>

#include "headroom/train/context/collectives.hpp"
#include "headroom/train/step/training_step.hpp"

namespace headroom::distributed {

// `collectives` must outlive the hook. A parameter without a gradient on this rank (unused by its
// batch) takes part with zeros, so that every rank sends the same buckets.
train::GradientHook weighted_gradient_average(train::Collectives& collectives,
                                              std::int64_t bucket_bytes = 25LL << 20);

}  // namespace headroom::distributed
