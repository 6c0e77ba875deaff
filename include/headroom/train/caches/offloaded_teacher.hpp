// Teacher offload for distillation without the output cache (--offload-teacher-to-cpu, CUDA): the
// frozen teacher's weights live in pinned host memory and are copied to the device for each forward
// pass only, so that between forwards the teacher holds no device memory.
#pragma once

#include <torch/nn/module.h>

#include <c10/core/Device.h>

#include <memory>
#include <vector>

#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_directory.hpp"

namespace headroom::train {

// Not thread-safe: a scope swaps the module's tensors in place, so one forward at a time.
class OffloadedTeacher {
 public:
  // Moves every parameter and buffer of `module` into pinned host memory (the module is shared, not
  // copied). `device` must be a CUDA device; throws std::invalid_argument otherwise.
  OffloadedTeacher(std::shared_ptr<torch::nn::Module> module, const c10::Device& device);

  // While alive, the module's parameters and buffers are fresh device copies, made with
  // asynchronous copies on the current stream (so ordered before the forward's kernels). On
  // destruction they point at the pinned host copies again and the device copies go back to the
  // caching allocator, which reuses them in stream order: nothing synchronises, and the allocator's
  // cache is not emptied.
  class DeviceScope {
   public:
    explicit DeviceScope(const OffloadedTeacher& owner);
    ~DeviceScope();
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;

   private:
    const OffloadedTeacher& owner_;
  };
  [[nodiscard]] DeviceScope on_device() const { return DeviceScope(*this); }

  // Bytes of the host copies.
  std::int64_t host_bytes() const;

 private:
  std::shared_ptr<torch::nn::Module> module_;
  c10::Device device_;
  std::vector<at::Tensor> tensors_;  // the module's own parameter and buffer handles
  std::vector<at::Tensor> host_;     // their pinned host copies, same order
};

// Whether the teacher is offloaded: distillation.offload_teacher with the output cache off
// and a CUDA device. Logs to `run` when the flag is set but does not apply (the cache is on, or the
// device is the CPU, where the teacher's weights are in host memory anyway).
bool teacher_offload_applies(const DistillationOptions& distillation, const c10::Device& device,
                             RunDirectory& run);

}  // namespace headroom::train
