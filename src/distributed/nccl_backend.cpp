#include <stdexcept>

#include "c10d_backends.hpp"
#include "headroom/nn/cuda_runtime.hpp"

namespace headroom::distributed::detail {

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int world_size, int device_index,
                                                    std::chrono::milliseconds timeout) {
  using Factory = c10::intrusive_ptr<c10d::Backend> (*)(const c10::intrusive_ptr<c10d::Store>&,
                                                         int, int, int, std::chrono::milliseconds);
  using FactoryAddress = void* (*)();
  // The plugin exports a function that returns the factory's address (src/cuda_plugin/).
  const auto address =
      reinterpret_cast<FactoryAddress>(nn::cuda_plugin_symbol("headroom_nccl_backend_factory"));
  const auto factory = reinterpret_cast<Factory>(address());
  return factory(store, rank, world_size, device_index, timeout);
}

}  // namespace headroom::distributed::detail
