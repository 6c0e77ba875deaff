// ProcessGroupNCCL needs nccl.h, from the torch wheel's nvidia-nccl package (its include directory
// is added for this file alone by src/CMakeLists.txt when it is found).
#if defined(USE_C10D_NCCL) && __has_include(<nccl.h>)
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#define HEADROOM_WITH_NCCL 1
#endif

#include <stdexcept>

#include "c10d_backends.hpp"

namespace headroom::distributed::detail {

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
      "this headroom was built without NCCL's headers (nccl.h from the torch wheel's nvidia-nccl "
      "package): data-parallel training on CUDA is unavailable; use --device cpu");
#endif
}

}  // namespace headroom::distributed::detail
