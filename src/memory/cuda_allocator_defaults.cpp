#include "headroom/memory/cuda_allocator_defaults.hpp"

#include <cstdlib>

namespace headroom::memory {
namespace {

constexpr const char* kVariables[] = {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"};

}  // namespace

bool default_to_expandable_segments() {
  for (const char* name : kVariables)
    if (std::getenv(name) != nullptr) return false;
  setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True", /*overwrite=*/0);
  return true;
}

std::string cuda_allocator_settings() {
  // The order in which LibTorch reads them: the first one set is used.
  for (const char* name : kVariables)
    if (const char* value = std::getenv(name); value != nullptr)
      return std::string(name) + "=" + value;
  return "";
}

}  // namespace headroom::memory
