// Gradient checkpointing: run a block without keeping its intermediate activations and recompute
// them in the backward pass. LibTorch's C++ API has none, so this is a custom autograd function.
// The default CPU (and, when initialised, CUDA) generator state is captured before the forward
// and restored for the recomputation, so dropout masks are identical and the gradients equal the
// non-checkpointed block's.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

namespace headroom::nn {

using CheckpointBlock = std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>;

// Returns block(inputs). `parameters` are the tensors the block reads besides its inputs (its
// module's parameters): their gradients flow through the checkpoint. Without grad mode, or when
// nothing requires grad, this simply calls block(inputs). Inputs may include integer tensors
// (e.g. edge_index); they get no gradient.
std::vector<at::Tensor> checkpoint(const CheckpointBlock& block,
                                   const std::vector<at::Tensor>& inputs,
                                   const std::vector<at::Tensor>& parameters);

}  // namespace headroom::nn
