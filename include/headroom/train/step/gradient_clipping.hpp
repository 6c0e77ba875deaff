// Global-norm gradient clipping that never waits for the device. LibTorch's C++
// torch::nn::utils::clip_grad_norm_ returns the norm as a host double, so on CUDA every call
// blocks the host until the backward pass has finished; the training step clips every step, so
// that read would serialise host and device once per step. The same arithmetic is done here
// with the norm and the clip coefficient left on the device (one multi-tensor norm, one
// multi-tensor multiply), and nothing is returned.
// Thread-safety: as the tensors it is given; call from the thread that owns the training step.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace headroom::train {

// Scales the gradients of `parameters` (those that have one) by min(1, max_norm / (norm + 1e-6)),
// norm being the L2 norm of all of them together: the result of clip_grad_norm_(parameters,
// max_norm). Every gradient must be on one device. max_norm must be positive.
void clip_gradient_norm(const std::vector<at::Tensor>& parameters, double max_norm);

// The global L2 norm of the gradients of `parameters` as a 0-dim float tensor on their device
// (0 when none has a gradient): what clip_gradient_norm compares with max_norm.
at::Tensor gradient_norm(const std::vector<at::Tensor>& parameters);

}  // namespace headroom::train
