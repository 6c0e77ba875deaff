// Memory readings: CUDA caching-allocator statistics, the process RSS, snapshots and JSON.
// The CPU tensor counters live in counting_cpu_allocator.cpp.
#include "headroom/memory/tensor_memory_meter.hpp"

#include <limits>

#include <c10/core/CachingDeviceAllocator.h>
#include <torch/cuda.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "counting_cpu_allocator.hpp"

namespace headroom::memory {

namespace {

// The CUDA caching allocator, or null when there is no CUDA device or it has not been set up
// yet. It is set up lazily by the first CUDA tensor; reading it must not force that (creating a
// CUDA context costs hundreds of MB), and before it nothing has been allocated anyway. Reached
// through c10's device-generic interface: CUDA's own library is the plugin's (nn/cuda_runtime.hpp),
// and until it is loaded torch::cuda::is_available() is false.
c10::DeviceAllocator* cuda_allocator(int device) {
  if (!torch::cuda::is_available()) {
    return nullptr;
  }
  const int count = torch::cuda::device_count();
  if (device < 0 || device >= count) {
    throw std::out_of_range("headroom: no CUDA device " + std::to_string(device) + " (" +
                            std::to_string(count) + " present)");
  }
  auto* allocator = c10::getDeviceAllocator(c10::kCUDA);
  return allocator != nullptr && allocator->initialized() ? allocator : nullptr;
}

std::int64_t aggregate(const c10::CachingAllocator::StatArray& stats) {
  return stats[static_cast<std::size_t>(c10::CachingAllocator::StatType::AGGREGATE)].current;
}

std::int64_t aggregate_peak(const c10::CachingAllocator::StatArray& stats) {
  return stats[static_cast<std::size_t>(c10::CachingAllocator::StatType::AGGREGATE)].peak;
}

}  // namespace

CudaTensorMemory cuda_tensor_memory(int device) {
  CudaTensorMemory memory;
  if (!torch::cuda::is_available()) {
    return memory;
  }
  auto* allocator = cuda_allocator(device);
  memory.available = true;
  if (allocator == nullptr) {
    return memory;
  }
  const auto stats = allocator->getDeviceStats(static_cast<c10::DeviceIndex>(device));
  memory.allocated_bytes = aggregate(stats.allocated_bytes);
  memory.peak_allocated_bytes = aggregate_peak(stats.allocated_bytes);
  memory.reserved_bytes = aggregate(stats.reserved_bytes);
  memory.peak_reserved_bytes = aggregate_peak(stats.reserved_bytes);
  memory.active_bytes = aggregate(stats.active_bytes);
  memory.inactive_split_bytes = aggregate(stats.inactive_split_bytes);
  memory.oom_count = stats.num_ooms;
  return memory;
}

MemorySnapshot memory_snapshot(int cuda_device) {
  MemorySnapshot snapshot;
  snapshot.cpu = cpu_tensor_memory();
  if (cuda_device >= 0) {
    snapshot.cuda = cuda_tensor_memory(cuda_device);
  }
  snapshot.rss_bytes = process_rss_bytes();
  snapshot.peak_rss_bytes = process_peak_rss_bytes();
  return snapshot;
}

std::int64_t device_peak_bytes(const MemorySnapshot& snapshot, bool cuda) {
  return cuda ? snapshot.cuda.peak_allocated_bytes : snapshot.cpu.peak_bytes;
}

void reset_peak(int cuda_device) {
  detail::reset_cpu_tensor_peak();
  if (cuda_device >= 0) {
    if (auto* allocator = cuda_allocator(cuda_device)) {
      allocator->resetPeakStats(static_cast<c10::DeviceIndex>(cuda_device));
    }
  }
}

std::int64_t process_rss_bytes() {
  // statm: total program size, then resident pages.
  std::ifstream statm("/proc/self/statm");
  std::int64_t size_pages = 0;
  std::int64_t resident_pages = 0;
  if (!(statm >> size_pages >> resident_pages)) {
    throw std::runtime_error("headroom: cannot read /proc/self/statm");
  }
  return resident_pages * static_cast<std::int64_t>(sysconf(_SC_PAGESIZE));
}

std::int64_t process_peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream fields(line.substr(6));
      std::int64_t kib = 0;
      std::string unit;
      if (fields >> kib >> unit && unit == "kB") {
        return kib * 1024;
      }
      break;
    }
  }
  throw std::runtime_error("headroom: cannot read VmHWM from /proc/self/status");
}

void to_json(nlohmann::json& json, const MemorySnapshot& snapshot) {
  const CpuTensorMemory& cpu = snapshot.cpu;
  const CudaTensorMemory& cuda = snapshot.cuda;
  json = nlohmann::json{
      {"cpu",
       {{"current_bytes", cpu.current_bytes},
        {"peak_bytes", cpu.peak_bytes},
        {"allocations", cpu.allocations},
        {"refusals", cpu.refusals},
        {"cached_bytes", cpu.cached_bytes}}},
      {"cuda",
       {{"available", cuda.available},
        {"allocated_bytes", cuda.allocated_bytes},
        {"peak_allocated_bytes", cuda.peak_allocated_bytes},
        {"reserved_bytes", cuda.reserved_bytes},
        {"peak_reserved_bytes", cuda.peak_reserved_bytes},
        {"active_bytes", cuda.active_bytes},
        {"inactive_split_bytes", cuda.inactive_split_bytes},
        {"oom_count", cuda.oom_count}}},
      {"rss_bytes", snapshot.rss_bytes},
      {"peak_rss_bytes", snapshot.peak_rss_bytes},
  };
}

}  // namespace headroom::memory
