// ProcessGroupNCCL, created inside the CUDA plugin (it lives in LibTorch's CUDA library). Needs
// nccl.h, from the torch wheel's nvidia-nccl package (src/CMakeLists.txt adds its include directory
// for this file when it is found). The distributed area reaches it through
// kNcclBackendFactorySymbol (distributed/c10d_backends.hpp).
#if __has_include(<nccl.h>)
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#define HEADROOM_WITH_NCCL 1
#endif

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <stdexcept>

namespace {

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int world_size, int device_index,
                                                    std::chrono::milliseconds timeout) {
#ifdef HEADROOM_WITH_NCCL
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  auto backend = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world_size, options);
  backend->setBoundDeviceId(c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(device_index)));
  return backend;
#else
  (void)store, (void)rank, (void)world_size, (void)device_index, (void)timeout;
  throw std::runtime_error(
      "headroom's CUDA plugin was built without NCCL's headers (nccl.h from the torch wheel's "
      "nvidia-nccl package): data-parallel training on CUDA is unavailable; use --device cpu");
#endif
}

}  // namespace

// The factory's address, under the name distributed/c10d_backends.hpp looks up.
extern "C" __attribute__((visibility("default"))) void* headroom_nccl_backend_factory() {
  return reinterpret_cast<void*>(&make_nccl_backend);
}
