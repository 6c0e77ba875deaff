#include "headroom/train/caches/offloaded_teacher.hpp"

#include <torch/torch.h>

#include <stdexcept>

namespace headroom::train {

OffloadedTeacher::OffloadedTeacher(std::shared_ptr<torch::nn::Module> module,
                                   const c10::Device& device)
    : module_(std::move(module)), device_(device) {
  if (!device_.is_cuda())
    throw std::invalid_argument("teacher offload needs a CUDA device, not " + device_.str());
  for (auto& tensor : module_->parameters()) tensors_.push_back(tensor);
  for (auto& tensor : module_->buffers()) tensors_.push_back(tensor);
  for (auto& tensor : tensors_) {
    // set_data swaps the storage under the module's own handle, as Module::to does.
    host_.push_back(tensor.to(torch::kCPU).pin_memory());
    tensor.set_data(host_.back());
  }
}

OffloadedTeacher::DeviceScope::DeviceScope(const OffloadedTeacher& owner) : owner_(owner) {
  for (std::size_t i = 0; i < owner_.tensors_.size(); ++i)
    owner_.tensors_[i].set_data(owner_.host_[i].to(owner_.device_, /*non_blocking=*/true));
}

OffloadedTeacher::DeviceScope::~DeviceScope() {
  for (std::size_t i = 0; i < owner_.tensors_.size(); ++i)
    owner_.tensors_[i].set_data(owner_.host_[i]);
}

bool teacher_offload_applies(const DistillationOptions& distillation, const c10::Device& device,
                             RunDirectory& run) {
  if (!distillation.enabled || !distillation.offload_teacher) return false;
  if (distillation.teacher_cache) {
    run.log("--offload-teacher-to-cpu ignored: the teacher output cache holds no teacher at all");
    return false;
  }
  if (!device.is_cuda()) {
    run.log("--offload-teacher-to-cpu is a no-op on the CPU: the teacher is in host memory anyway");
    return false;
  }
  return true;
}

std::int64_t OffloadedTeacher::host_bytes() const {
  std::int64_t bytes = 0;
  for (const auto& tensor : host_) bytes += static_cast<std::int64_t>(tensor.nbytes());
  return bytes;
}

}  // namespace headroom::train
