// headroom's CUDA code lives in a plugin, libheadroom_cuda.so: the fused GAT kernels, the caching
// allocator's settings, device properties and the NCCL backend. It links LibTorch's CUDA
// libraries and the binaries do not, so a CPU run never maps them (~355 MiB); the plugin, and with
// it CUDA, is loaded the first time a CUDA device is asked for (train::resolve_run_context, the
// data-parallel job). Until then LibTorch knows no CUDA: torch::cuda::is_available() is false.
//
// Every function is thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace headroom::nn {

// Where the plugin is looked for: $HEADROOM_CUDA_PLUGIN when set; else libheadroom_cuda.so in
// the directory of the binary or library that holds this code, then in ../lib from it.
std::filesystem::path cuda_plugin_path();

// Loads the plugin (once). Throws std::runtime_error naming the file and the loader's reason when
// it is missing, does not load (a missing CUDA library, a broken file) or is of another build.
// Call it before anything asks LibTorch about CUDA (torch::manual_seed does): LibTorch keeps the
// first answer, so a late load throws std::logic_error saying so.
void load_cuda_plugin();
bool cuda_plugin_loaded();

// For code that may meet a CUDA device without having asked for one (the test binary, tools):
// loads the plugin when this machine has an NVIDIA driver (/proc/driver/nvidia/version or
// /dev/nvidiactl) and the plugin exists; loads nothing and returns false otherwise.
bool load_cuda_plugin_if_usable();

// Requires the plugin (std::logic_error otherwise).
std::int64_t cuda_total_memory_bytes(int device);  // without creating a CUDA context
std::string cuda_device_name(int device);
void set_cuda_memory_fraction(double fraction, int device);  // the caching allocator's cap
void* cuda_current_stream(int device);                       // a cudaStream_t

// Returns the caching allocator's unused blocks to the driver; nothing without the plugin (then
// no CUDA memory exists).
void empty_cuda_cache();

// A symbol the plugin exports (the distributed area's NCCL factory). Loads the plugin; throws
// std::runtime_error naming the plugin and the symbol when it is absent.
void* cuda_plugin_symbol(const char* name);

}  // namespace headroom::nn
