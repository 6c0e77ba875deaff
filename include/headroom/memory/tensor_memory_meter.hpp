// Tensor memory accounting. On CPU a counting allocator, installed as LibTorch's CPU allocator,
// tracks the bytes of every live tensor; on CUDA the caching allocator's own statistics are read.
// Also the process resident set size. Everything here is thread-safe.
#pragma once

#include <cstdint>

#include <nlohmann/json_fwd.hpp>

namespace headroom::memory {

struct CpuTensorMemory {
  std::int64_t current_bytes = 0;  // live tensor bytes right now
  std::int64_t peak_bytes = 0;     // highest current_bytes since the last reset_peak
  std::int64_t allocations = 0;    // allocations since install
  std::int64_t refusals = 0;       // allocations refused by the budget since install
};

struct CudaTensorMemory {
  bool available = false;            // false without a CUDA device (all fields then 0)
  std::int64_t allocated_bytes = 0;  // current
  std::int64_t peak_allocated_bytes = 0;
  std::int64_t reserved_bytes = 0;
  std::int64_t peak_reserved_bytes = 0;
  std::int64_t active_bytes = 0;
  std::int64_t inactive_split_bytes = 0;
  std::int64_t oom_count = 0;
};

struct MemorySnapshot {
  CpuTensorMemory cpu;
  CudaTensorMemory cuda;
  std::int64_t rss_bytes = 0;       // process resident set now (/proc/self/statm)
  std::int64_t peak_rss_bytes = 0;  // VmHWM: the process's high-water mark since start
};

// Installs the counting allocator (idempotent; call before creating tensors to count them all —
// tensors allocated before are freed through their own deleter and never counted).
void install_counting_cpu_allocator();
bool counting_cpu_allocator_installed();

// Makes glibc keep freed heap memory for reuse instead of returning it to the kernel: training
// frees and reallocates the same large activation buffers every step, and by default each one is
// a fresh mmap whose pages fault in zeroed again (measured: over half the step time on CPU).
// Peak RSS then stays at the tensor peak plus the allocator's reuse slack. Call once at start-up.
void keep_freed_host_memory();

// A CPU tensor allocation that would take current_bytes past `bytes` fails with
// c10::OutOfMemoryError, exactly like a device OOM. 0 removes the limit.
void set_cpu_tensor_budget(std::int64_t bytes);
std::int64_t cpu_tensor_budget();

// Fault injection (tests, drills): among CPU tensor allocations of at least `min_bytes`, let
// `skip` more succeed, then fail the next `count` with c10::OutOfMemoryError, as a real OOM would.
void inject_cpu_allocation_failures(std::int64_t skip, std::int64_t count, std::int64_t min_bytes);
// Reads HEADROOM_INJECT_OOM="SKIP:COUNT:MIN_BYTES" (unset or empty: nothing); throws
// std::invalid_argument on a malformed value.
void inject_cpu_allocation_failures_from_environment();
std::int64_t injected_cpu_allocation_failures();  // failures injected so far

CpuTensorMemory cpu_tensor_memory();
CudaTensorMemory cuda_tensor_memory(int device = 0);
MemorySnapshot memory_snapshot(int cuda_device = -1);  // -1: no CUDA statistics

// Starts a new phase: CPU peak := current; CUDA peak statistics reset when CUDA is available.
void reset_peak(int cuda_device = -1);

std::int64_t process_rss_bytes();
std::int64_t process_peak_rss_bytes();

void to_json(nlohmann::json& json, const MemorySnapshot& snapshot);

}  // namespace headroom::memory
