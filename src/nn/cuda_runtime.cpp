#include "headroom/nn/cuda_runtime.hpp"

#include <ATen/detail/CUDAHooksInterface.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <system_error>

#include "cuda_plugin_table.hpp"

namespace headroom::nn {
namespace {

constexpr const char* kPluginFile = "libheadroom_cuda.so";

std::mutex g_mutex;        // serialises loading
void* g_handle = nullptr;  // guarded by g_mutex; never closed
// Set once, under g_mutex; read without it (the fused kernels read it on every CUDA call).
std::atomic<const CudaPluginTable*> g_table{nullptr};

// The directory of the ELF file (binary or shared library) this function was linked into.
std::filesystem::path own_directory() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&own_directory), &info) == 0 || info.dli_fname == nullptr)
    return {};
  std::error_code ignored;
  const auto file = std::filesystem::canonical(info.dli_fname, ignored);
  return file.empty() ? std::filesystem::path(info.dli_fname).parent_path() : file.parent_path();
}

const CudaPluginTable& table() {
  const CudaPluginTable* loaded = g_table.load(std::memory_order_acquire);
  if (loaded == nullptr)
    throw std::logic_error(
        "headroom: a CUDA function was called before the CUDA plugin was loaded");
  return *loaded;
}

void load_locked() {
  if (g_table.load(std::memory_order_relaxed) != nullptr) return;
  const auto path = cuda_plugin_path();
  // RTLD_GLOBAL: LibTorch's CUDA libraries, loaded with the plugin, register CUDA with LibTorch
  // through static initialisers that other libraries then find.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    const char* reason = ::dlerror();
    throw std::runtime_error(fmt::format(
        "cannot load headroom's CUDA plugin {}: {} (CUDA needs a headroom built with a CUDA "
        "compiler and the torch wheel's CUDA libraries; set HEADROOM_CUDA_PLUGIN to its path, or "
        "use --device cpu)",
        path.string(), reason != nullptr ? reason : "unknown reason"));
  }
  const auto* found = static_cast<const CudaPluginTable*>(::dlsym(handle, kCudaPluginTableSymbol));
  if (found == nullptr)
    throw std::runtime_error(fmt::format("{} is not headroom's CUDA plugin (no symbol {})",
                                         path.string(), kCudaPluginTableSymbol));
  if (found->abi != kCudaPluginAbi)
    throw std::runtime_error(fmt::format(
        "{} is headroom's CUDA plugin of another build (interface {}, this binary needs {}); "
        "rebuild both from one tree",
        path.string(), found->abi, kCudaPluginAbi));
  g_handle = handle;
  // LibTorch looks its CUDA hooks up once and keeps the answer: a process that asked about CUDA
  // before this (torch::manual_seed, torch::cuda::is_available) keeps the CPU-only stub, and
  // fails later with "Cannot initialize CUDA without ATen_cuda library". Said here, by cause.
  if (!at::detail::getCUDAHooks().isBuilt())
    throw std::logic_error(
        "headroom: LibTorch was asked about CUDA before the CUDA plugin was loaded, and keeps its "
        "CPU-only answer for the life of the process: load the plugin first "
        "(nn::load_cuda_plugin, before torch::manual_seed)");
  g_table.store(found, std::memory_order_release);
}

}  // namespace

std::filesystem::path cuda_plugin_path() {
  if (const char* given = std::getenv("HEADROOM_CUDA_PLUGIN"); given != nullptr && *given != 0)
    return given;
  const auto dir = own_directory();
  std::error_code ignored;
  if (std::filesystem::exists(dir / kPluginFile, ignored)) return dir / kPluginFile;
  return (dir / ".." / "lib" / kPluginFile).lexically_normal();
}

void load_cuda_plugin() {
  const std::lock_guard lock(g_mutex);
  load_locked();
}

bool cuda_plugin_loaded() { return g_table.load(std::memory_order_acquire) != nullptr; }

bool load_cuda_plugin_if_usable() {
  std::error_code ignored;
  // The driver's proc entry, or (in a container that hides /proc/driver) its control device.
  if (!std::filesystem::exists("/proc/driver/nvidia/version", ignored) &&
      !std::filesystem::exists("/dev/nvidiactl", ignored))
    return false;
  if (!std::filesystem::exists(cuda_plugin_path(), ignored)) return false;
  load_cuda_plugin();
  return true;
}

std::int64_t cuda_total_memory_bytes(int device) { return table().total_memory_bytes(device); }

std::string cuda_device_name(int device) { return table().device_name(device); }

void set_cuda_memory_fraction(double fraction, int device) {
  table().set_memory_fraction(fraction, device);
}

void* cuda_current_stream(int device) { return table().current_stream(device); }

void empty_cuda_cache() {
  if (cuda_plugin_loaded()) table().empty_cache();
}

void* cuda_plugin_symbol(const char* name) {
  const std::lock_guard lock(g_mutex);
  load_locked();
  void* symbol = ::dlsym(g_handle, name);
  if (symbol == nullptr)
    throw std::runtime_error(fmt::format("headroom's CUDA plugin {} has no symbol {}",
                                         cuda_plugin_path().string(), name));
  return symbol;
}

namespace detail {
// For fused_gat.cpp: the kernels, or null when the plugin is not loaded.
const CudaPluginTable* cuda_plugin_table() { return g_table.load(std::memory_order_acquire); }
}  // namespace detail

}  // namespace headroom::nn
