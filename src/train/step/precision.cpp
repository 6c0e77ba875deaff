#include "headroom/train/step/precision.hpp"

#include <torch/torch.h>

#include <ATen/autocast_mode.h>
#include <stdexcept>

namespace headroom::train {

Precision parse_precision(const std::string& text) {
  if (text == "32") return Precision::kFloat32;
  if (text == "bf16-mixed") return Precision::kBf16Mixed;
  if (text == "16-mixed") return Precision::kFp16Mixed;
  throw std::invalid_argument("precision must be 32, bf16-mixed or 16-mixed, not '" + text + "'");
}

AutocastScope::AutocastScope(Precision precision, const c10::Device& device)
    : device_type_(device.type()), previous_dtype_(at::kFloat) {
  if (precision == Precision::kFloat32) return;
  active_ = true;
  was_enabled_ = at::autocast::is_autocast_enabled(device_type_);
  previous_dtype_ = at::autocast::get_autocast_dtype(device_type_);
  at::autocast::set_autocast_enabled(device_type_, true);
  at::autocast::set_autocast_dtype(device_type_,
                                   precision == Precision::kBf16Mixed ? at::kBFloat16 : at::kHalf);
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  at::autocast::set_autocast_enabled(device_type_, was_enabled_);
  at::autocast::set_autocast_dtype(device_type_, previous_dtype_);
  // Autocast caches low-precision copies of the weights for the scope; they must not outlive it
  // (the next step has new weights).
  if (!was_enabled_) at::autocast::clear_cache();
}

DynamicLossScaler::DynamicLossScaler(bool enabled, double initial_scale,
                                     std::int64_t growth_interval)
    : enabled_(enabled), scale_(enabled ? initial_scale : 1.0), growth_interval_(growth_interval) {}

at::Tensor DynamicLossScaler::scale(const at::Tensor& loss) const {
  return enabled_ ? loss * scale_ : loss;
}

bool DynamicLossScaler::unscale(const std::vector<at::Tensor>& parameters) {
  if (!enabled_) return true;
  std::vector<at::Tensor> grads;
  for (const auto& p : parameters)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return true;
  auto found_inf = torch::zeros({1}, grads.front().options().dtype(at::kFloat));
  auto inv_scale = torch::full({1}, 1.0 / scale_, grads.front().options().dtype(at::kFloat));
  at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale);
  return found_inf.item<float>() == 0.0F;
}

void DynamicLossScaler::update(bool step_was_finite) {
  if (!enabled_) return;
  if (!step_was_finite) {
    scale_ *= 0.5;
    clean_steps_ = 0;
    ++skipped_;
    return;
  }
  if (++clean_steps_ >= growth_interval_) {
    scale_ *= 2.0;
    clean_steps_ = 0;
  }
}

}  // namespace headroom::train
