// headroom's CUDA plugin (nn/cuda_runtime.hpp): everything that needs LibTorch's CUDA libraries,
// behind the table the binaries load at run time. The fused GAT kernels are nn's
// (src/nn/fused_gat_cuda.cu), compiled into this library.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <string>

#include "cuda_plugin_table.hpp"

namespace headroom::nn {
namespace {

const cudaDeviceProp& properties(int device) {
  return *at::cuda::getDeviceProperties(std::max(0, device));
}

const CudaPluginTable kTable{
    kCudaPluginAbi,
    &kernels::gat_forward_cuda,
    &kernels::gat_backward_cuda,
    [](int device) -> void* {
      return c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device)).stream();
    },
    [](int device) { return static_cast<std::int64_t>(properties(device).totalGlobalMem); },
    [](int device) { return std::string(properties(device).name); },
    [](double fraction, int device) {
      c10::cuda::CUDACachingAllocator::setMemoryFraction(
          fraction, static_cast<c10::DeviceIndex>(std::max(0, device)));
    },
    [] { c10::cuda::CUDACachingAllocator::emptyCache(); },
};

}  // namespace
}  // namespace headroom::nn

extern "C" __attribute__((visibility("default")))
const headroom::nn::CudaPluginTable headroom_cuda_plugin_table = headroom::nn::kTable;
