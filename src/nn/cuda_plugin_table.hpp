// The interface between the nn area and the CUDA plugin (src/cuda_plugin/): a table of functions
// the plugin exports under kCudaPluginTableSymbol. Both sides are built from this tree with one
// compiler, so C++ types cross it; kCudaPluginAbi is bumped whenever the table changes, and a
// plugin of another version is refused by name. Internal to nn and the plugin.
#pragma once

#include <cstdint>
#include <string>

#include "fused_gat_kernels.hpp"

namespace headroom::nn {

inline constexpr int kCudaPluginAbi = 1;
inline constexpr const char* kCudaPluginTableSymbol = "headroom_cuda_plugin_table";

struct CudaPluginTable {
  int abi = kCudaPluginAbi;
  void (*gat_forward)(const kernels::GatForwardArgs& args, void* stream);
  void (*gat_backward)(const kernels::GatBackwardArgs& args, void* stream);
  void* (*current_stream)(int device);
  std::int64_t (*total_memory_bytes)(int device);
  std::string (*device_name)(int device);
  void (*set_memory_fraction)(double fraction, int device);
  void (*empty_cache)();
};

namespace detail {
// The loaded plugin's table, or null before nn::load_cuda_plugin() (cuda_runtime.cpp).
const CudaPluginTable* cuda_plugin_table();
}  // namespace detail

}  // namespace headroom::nn
