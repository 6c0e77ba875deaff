// The input step every headroom model shares: node feature 0 holds the CAN-ID index (stored as
// float); it is replaced by its learned embedding, and the other features follow it.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/modules/embedding.h>

namespace headroom::models {

// x [N, F] (column 0: ID index) -> [N, embedding_dim + F - 1], in the embedding's dtype.
at::Tensor embed_ids(torch::nn::Embedding& embedding, const at::Tensor& x);

}  // namespace headroom::models
