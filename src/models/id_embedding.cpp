#include "headroom/models/id_embedding.hpp"

#include <torch/torch.h>

namespace headroom::models {

at::Tensor embed_ids(torch::nn::Embedding& embedding, const at::Tensor& x) {
  auto embedded = embedding(x.select(1, 0).to(at::kLong));
  return torch::cat({embedded, x.slice(1, 1).to(embedded.scalar_type())}, 1);
}

}  // namespace headroom::models
