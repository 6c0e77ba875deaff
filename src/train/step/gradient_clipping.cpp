#include "headroom/train/step/gradient_clipping.hpp"

#include <torch/torch.h>

#include <stdexcept>

namespace headroom::train {
namespace {

std::vector<at::Tensor> defined_gradients(const std::vector<at::Tensor>& parameters) {
  std::vector<at::Tensor> gradients;
  gradients.reserve(parameters.size());
  for (const auto& parameter : parameters)
    if (parameter.grad().defined()) gradients.push_back(parameter.grad());
  return gradients;
}

at::Tensor norm_of(const std::vector<at::Tensor>& gradients) {
  // One norm per tensor in a single multi-tensor kernel, then the norm of those norms: the
  // global L2 norm, as clip_grad_norm_ computes it, without a kernel per parameter.
  return at::stack(at::_foreach_norm(gradients, 2)).norm(2);
}

}  // namespace

at::Tensor gradient_norm(const std::vector<at::Tensor>& parameters) {
  const auto gradients = defined_gradients(parameters);
  if (gradients.empty()) return torch::zeros({});
  return norm_of(gradients);
}

void clip_gradient_norm(const std::vector<at::Tensor>& parameters, double max_norm) {
  if (!(max_norm > 0)) throw std::invalid_argument("clip_gradient_norm: max_norm must be positive");
  auto gradients = defined_gradients(parameters);
  if (gradients.empty()) return;
  // Multiplying by exactly 1 where no clipping is needed leaves the gradients bit-identical, so
  // the coefficient never has to be compared on the host.
  const auto coefficient = (max_norm / (norm_of(gradients) + 1e-6)).clamp_max(1.0);
  at::_foreach_mul_(gradients, coefficient);
}

}  // namespace headroom::train
