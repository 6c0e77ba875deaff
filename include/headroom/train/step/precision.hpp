// Numeric precision of training: fp32, bf16 autocast (CPU and CUDA) or fp16 autocast with dynamic
// loss scaling (CUDA). Autocast runs matrix products in low precision and keeps reductions and
// losses in fp32; the parameters and optimiser state stay fp32.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <string>
#include <vector>

namespace headroom::train {

enum class Precision { kFloat32, kBf16Mixed, kFp16Mixed };

// "32", "bf16-mixed", "16-mixed"; throws std::invalid_argument otherwise.
Precision parse_precision(const std::string& text);

// Enables autocast for `device`'s type with the precision's dtype for the scope's lifetime and
// restores the previous state after. A no-op for kFloat32. Not thread-safe (autocast state is
// thread-local: construct it on the thread that runs the forward pass).
class AutocastScope {
 public:
  AutocastScope(Precision precision, const c10::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  c10::DeviceType device_type_;
  bool was_enabled_ = false;
  at::ScalarType previous_dtype_;
};

// Dynamic loss scaling for fp16: the loss is multiplied by `scale` before backward; gradients are
// unscaled before clipping; a step whose gradients overflowed is skipped and the scale halved;
// after `growth_interval` clean steps the scale doubles. Disabled (scale 1, never skips) unless
// enabled at construction.
class DynamicLossScaler {
 public:
  explicit DynamicLossScaler(bool enabled, double initial_scale = 65536.0,
                             std::int64_t growth_interval = 2000);
  at::Tensor scale(const at::Tensor& loss) const;
  // Divides the gradients by the scale; returns false when any is inf/NaN (skip this step).
  bool unscale(const std::vector<at::Tensor>& parameters);
  // Adjusts the scale after a step (or a skipped one).
  void update(bool step_was_finite);
  double current_scale() const { return scale_; }
  bool enabled() const { return enabled_; }
  std::int64_t skipped_steps() const { return skipped_; }

 private:
  bool enabled_;
  double scale_;
  std::int64_t growth_interval_;
  std::int64_t clean_steps_ = 0;
  std::int64_t skipped_ = 0;
};

}  // namespace headroom::train
