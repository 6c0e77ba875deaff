#include "headroom/train/step/row_blocked_adam.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <memory>

namespace headroom::train {
namespace {

// Rows per block for a parameter whose rows hold `row_elements`: a multiple of 64 rows (so a
// block is a multiple of 64 elements) within kAdamBlockElements where a row allows it.
std::int64_t rows_per_block(std::int64_t row_elements) {
  const auto rows = kAdamBlockElements / std::max<std::int64_t>(row_elements, 1);
  return std::max<std::int64_t>(64, rows / 64 * 64);
}

struct Moments {
  double beta1;
  double beta2;
  double eps;
  double weight_decay;
  double bias_correction2_sqrt;
  double step_size;
};

// torch::optim::Adam's update (no AMSGrad) of one block, in its order of operations.
void update_block(at::Tensor param, at::Tensor grad, at::Tensor exp_avg, at::Tensor exp_avg_sq,
                  const Moments& m) {
  if (m.weight_decay != 0) grad = grad.add(param, m.weight_decay);
  exp_avg.mul_(m.beta1).add_(grad, 1 - m.beta1);
  exp_avg_sq.mul_(m.beta2).addcmul_(grad, grad.conj(), 1 - m.beta2);
  const auto denom = (exp_avg_sq.sqrt() / m.bias_correction2_sqrt).add_(m.eps);
  param.addcdiv_(exp_avg, denom, -m.step_size);
}

torch::optim::AdamParamState& state_of(torch::optim::Optimizer& optimizer, const at::Tensor& p) {
  auto& states = optimizer.state();
  auto found = states.find(p.unsafeGetTensorImpl());
  if (found == states.end()) {
    auto state = std::make_unique<torch::optim::AdamParamState>();
    state->step(0);
    state->exp_avg(torch::zeros_like(p, at::MemoryFormat::Preserve));
    state->exp_avg_sq(torch::zeros_like(p, at::MemoryFormat::Preserve));
    found = states.emplace(p.unsafeGetTensorImpl(), std::move(state)).first;
  }
  return static_cast<torch::optim::AdamParamState&>(*found->second);
}

}  // namespace

at::Tensor RowBlockedAdam::step(LossClosure closure) {
  for (const auto& group : param_groups())
    if (static_cast<const torch::optim::AdamOptions&>(group.options()).amsgrad())
      return torch::optim::Adam::step(std::move(closure));
  const torch::NoGradGuard no_grad;
  at::Tensor loss;
  if (closure != nullptr) {
    const at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  for (auto& group : param_groups()) {
    const auto& options = static_cast<const torch::optim::AdamOptions&>(group.options());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      const auto& grad = p.grad();
      TORCH_CHECK(!grad.is_sparse(), "Adam does not support sparse gradients");
      auto& state = state_of(*this, p);
      state.step(state.step() + 1);
      const auto [beta1, beta2] = options.betas();
      const auto steps = static_cast<double>(state.step());
      const Moments moments{beta1,
                            beta2,
                            options.eps(),
                            options.weight_decay(),
                            std::sqrt(1 - std::pow(beta2, steps)),
                            options.lr() / (1 - std::pow(beta1, steps))};
      auto& exp_avg = state.exp_avg();
      auto& exp_avg_sq = state.exp_avg_sq();
      const bool blockable = p.dim() >= 1 && p.is_contiguous() && grad.is_contiguous() &&
                             exp_avg.is_contiguous() && exp_avg_sq.is_contiguous() &&
                             grad.sizes() == p.sizes();
      if (!blockable || p.numel() <= kAdamBlockElements) {
        update_block(p, grad, exp_avg, exp_avg_sq, moments);
        continue;
      }
      const auto rows = p.size(0);
      const auto block = rows_per_block(p.numel() / std::max<std::int64_t>(rows, 1));
      for (std::int64_t first = 0; first < rows; first += block) {
        const auto length = std::min(block, rows - first);
        update_block(p.narrow(0, first, length), grad.narrow(0, first, length),
                     exp_avg.narrow(0, first, length), exp_avg_sq.narrow(0, first, length),
                     moments);
      }
    }
  }
  return loss;
}

}  // namespace headroom::train
