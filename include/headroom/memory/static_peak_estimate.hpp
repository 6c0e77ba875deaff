// The static (analytic) mode of the planner: a training step's peak estimated from the model's
// shapes alone, without running anything, as the same linear form the measured mode fits
// (peak_model.hpp: fixed + per node + per edge + per graph). It counts the tensors the forward
// pass keeps for the backward pass (per GAT layer: the projection, attention scores and their
// softmax per edge and head, gathered and weighted messages per edge, the layer's outputs; with
// gradient checkpointing only each layer's input and output, plus one layer recomputed), the
// decoders' vocabulary-wide logits of the VGAE, the loss's float copies, the gradients of the
// largest of those in the backward pass, and the parameters with their gradients and Adam's two
// moments. It ignores allocator rounding and kernel workspaces, so it is a first estimate for a
// model that cannot be probed here (docs/memory.md gives its measured error); the measured mode is
// what training uses. Pure function; thread-safe.
#pragma once

#include "headroom/memory/peak_model.hpp"
#include "headroom/models/model_config.hpp"

namespace headroom::memory {

// One per model configuration that has an estimate (the model families call theirs).
// `reduced_precision`: bf16 or fp16 autocast (projections and messages in 2 bytes).
PeakFit static_peak_estimate(const models::GatConfig& gat, bool reduced_precision);
PeakFit static_peak_estimate(const models::VgaeConfig& vgae, bool reduced_precision);

// The parameters (weights and biases) of the model of a configuration, counted without building
// it: what the estimate's fixed part holds 16 bytes of (weight, gradient, Adam's two moments). A
// double, so that an absurd configuration gives a huge count rather than an overflow.
double model_parameter_count(const models::GatConfig& gat);
double model_parameter_count(const models::VgaeConfig& vgae);

}  // namespace headroom::memory
