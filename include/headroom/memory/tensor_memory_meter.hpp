// Tensor memory accounting. On CPU a counting allocator, installed as LibTorch's CPU allocator,
// tracks the bytes of every live tensor; on CUDA the caching allocator's own statistics are read.
// Also the process resident set size. Everything here is thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace headroom::memory {

struct CpuTensorMemory {
  std::int64_t current_bytes = 0;  // live tensor bytes right now
  std::int64_t peak_bytes = 0;     // highest current_bytes since the last reset_peak
  std::int64_t allocations = 0;    // allocations since install
  std::int64_t refusals = 0;       // allocations refused by the budget since install
  std::int64_t cached_bytes = 0;   // freed blocks kept for reuse (keep_freed_host_memory)
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

// Makes the counting allocator keep freed CPU tensor blocks of 1 MiB and more for reuse, by size
// class (a block is at most 12.5% larger than its request; a request may take a cached block up
// to two classes larger): training frees and reallocates the same large activation buffers every
// step, and from glibc each is a fresh mmap whose pages fault in zeroed again (measured: 13-25% of
// a GAT-teacher step on CPU; an epoch ran 2.2x slower). Bound: cached + live tensor bytes stay
// within 1.25 x the highest live tensor bytes of the phase (since the last
// release_cached_host_memory), and within the CPU tensor budget when one is set; a fresh
// allocation that fails is retried with the cache emptied; glibc's mmap threshold is fixed at 1 MiB
// (process-wide), or freed blocks stay in its heap. Call once at start-up, with the allocator.
void keep_freed_host_memory();
// Frees every cached block (between phases and stages, under host-memory pressure) and starts a
// new phase: the cache's bound follows the live bytes from here. Returns the bytes released.
std::int64_t release_cached_host_memory();

// A CPU tensor allocation that would take current_bytes past `bytes` fails with
// c10::OutOfMemoryError, exactly like a device OOM. 0 removes the limit.
void set_cpu_tensor_budget(std::int64_t bytes);
std::int64_t cpu_tensor_budget();

// Fault injection (tests, drills): among CPU tensor allocations of at least `min_bytes`, let
// `skip` more succeed, then fail the next `count` with c10::OutOfMemoryError, as a real OOM would.
// A non-empty `site` counts only allocations made inside util::AllocationSite(site) (e.g.
// "collate", "epoch metrics"; util/allocation_site.hpp). Call before training starts.
void inject_cpu_allocation_failures(std::int64_t skip, std::int64_t count, std::int64_t min_bytes,
                                    std::string_view site = {});
// Reads HEADROOM_INJECT_OOM="SKIP:COUNT:MIN_BYTES[:SITE]" (unset or empty: nothing); throws
// std::invalid_argument on a malformed value.
void inject_cpu_allocation_failures_from_environment();

CpuTensorMemory cpu_tensor_memory();
CudaTensorMemory cuda_tensor_memory(int device = 0);
MemorySnapshot memory_snapshot(int cuda_device = -1);  // -1: no CUDA statistics
// The training device's peak tensor bytes in `snapshot`: the CUDA caching allocator's peak when
// `cuda`, the counting CPU allocator's otherwise.
std::int64_t device_peak_bytes(const MemorySnapshot& snapshot, bool cuda);

// Starts a new phase: CPU peak := current; CUDA peak statistics reset when CUDA is available.
void reset_peak(int cuda_device = -1);

std::int64_t process_rss_bytes();
std::int64_t process_peak_rss_bytes();

void to_json(nlohmann::json& json, const MemorySnapshot& snapshot);

}  // namespace headroom::memory
