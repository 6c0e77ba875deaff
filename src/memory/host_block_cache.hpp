// Internal to src/memory: freed CPU tensor blocks kept for reuse by the counting allocator.
//
// Why: a training step frees and reallocates the same large activation buffers every step. From
// glibc each block of more than a few MiB is a fresh mmap whose pages the kernel faults in and
// zeroes again — measured at 13-25% of a GAT-teacher step on two cores. Making glibc keep those
// blocks in its heap (M_MMAP_MAX 0) removes the faults but fragments it: peak RSS grew to ~4x the
// tensor peak. This cache keeps whole blocks instead, by size class, so that reuse is exact and
// the memory it holds is bounded and visible (CpuTensorMemory::cached_bytes).
//
// Size classes: 8 per power of two (a block is at most 12.5% larger than its request). A request
// takes a cached block of its class or of one of the next two (at most 25% larger), so that a
// batch of another size still reuses what the last one freed. Only blocks of at least kMinBytes
// are cached; smaller ones glibc's arenas recycle well.
// Bound (set by the caller, counting_cpu_allocator.cpp): cached bytes + live tensor bytes never
// exceed 1.25 x the highest live tensor bytes of the current phase, nor the CPU tensor budget
// when one is set — so resident tensor memory stays within a quarter above the phase's peak.
// Thread-safety: all members may be called from any thread (one mutex).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace headroom::memory::detail {

class HostBlockCache {
 public:
  static constexpr std::size_t kMinBytes = std::size_t{1} << 20;

  // The block size a request of `bytes` (header included) is allocated with.
  static std::size_t block_bytes(std::size_t bytes);

  void enable() { enabled_.store(true, std::memory_order_relaxed); }
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }

  // A cached block of `block` bytes or of one of the next two classes (its size in `*taken`), or
  // null.
  void* take(std::size_t block, std::size_t* taken);
  // Keeps `base` (a block of `block` bytes) if the bound allows: `limit` is the budget or peak,
  // `live` the live tensor bytes now. Returns false when the caller must free it.
  bool offer(void* base, std::size_t block, std::int64_t limit, std::int64_t live);
  // Frees cached blocks through `release` until cached + live <= limit.
  void shrink_to(std::int64_t limit, std::int64_t live, void (*release)(void*));
  // Frees every cached block through `release`; returns the bytes released.
  std::int64_t clear(void (*release)(void*));
  std::int64_t cached_bytes() const { return cached_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> enabled_{false};
  std::atomic<std::int64_t> cached_{0};
  std::mutex mutex_;
  std::map<std::size_t, std::vector<void*>> free_blocks_;  // by block size, ascending
};

}  // namespace headroom::memory::detail
