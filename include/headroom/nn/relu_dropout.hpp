// ReLU followed by inverted dropout as one operation:
//   training:  out = max(x, 0) / (1 - p) where the element is kept (probability 1 - p), else 0
//   otherwise: out = max(x, 0)
// Why not torch::dropout(torch::relu(x)): on CPU torch draws every Bernoulli sample on one thread
// through the generator (a serial kernel: ~14% of a GAT-teacher step at batch 4096 on two cores)
// and keeps a mask tensor for backward. Here each keep decision is a counter-based hash of
// (seed, element index), computed in parallel; the seed is one draw from the default CPU
// generator per call, so torch::manual_seed and gradient checkpointing's generator restore
// (checkpoint.hpp) reproduce the same mask. Backward needs only the output: out > 0 exactly
// where x > 0 and the element was kept, so no mask is stored.
//
// A NaN input stays NaN, kept or dropped, as with torch's relu then dropout (NaN x 0 is NaN):
// garbage is never silently zeroed. Its gradient is zero, as in torch's ReLU backward. On devices
// other than the CPU this is torch::dropout(torch::relu(x)). Thread-safety: as torch operators (the
// generator draw holds the generator's mutex).
#pragma once

#include <ATen/core/Tensor.h>

namespace headroom::nn {

// p in [0, 1); x floating point (float, double, half, bfloat16) of any shape.
at::Tensor relu_dropout(const at::Tensor& x, double p, bool training);

}  // namespace headroom::nn
