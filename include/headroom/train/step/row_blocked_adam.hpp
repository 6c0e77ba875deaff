// Adam whose update runs over blocks of a parameter's rows. torch::optim::Adam forms its
// denominator, sqrt(v) / sqrt(1 - β2^t) + ε, as temporaries the size of the whole parameter (two
// at once): for one big graph's identity layer (20 Newsgroups: 61.6k × 200 float32, 47 MiB) that
// is 94 MiB on top of the weights, the gradient and both moments, and it decides whether a step
// fits a budget. Here each temporary is one block (at most kAdamBlockElements elements).
//
// The arithmetic is torch's Adam's, operation for operation, so the result is the same bits:
// blocks hold a multiple of 64 elements (the last excepted), which keeps every vectorised kernel's
// split into full vectors and a tail where the whole-tensor operation has it. The state, its
// serialisation and the options are Adam's (this is an Adam). AMSGrad falls back to torch's step.
// Not thread-safe (an optimiser).
#pragma once

#include <torch/optim/adam.h>

#include <cstdint>

namespace headroom::train {

// Elements per block: 256 KiB per float32 temporary. Small enough that the temporaries are noise
// beside any parameter worth blocking; large enough that a block's few operations cost far more
// than their dispatch (20 Newsgroups' identity layer: 193 blocks, well under a millisecond of
// dispatch per step).
inline constexpr std::int64_t kAdamBlockElements = std::int64_t{1} << 16;

class RowBlockedAdam final : public torch::optim::Adam {
 public:
  using torch::optim::Adam::Adam;
  at::Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace headroom::train
