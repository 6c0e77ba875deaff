#include "host_block_cache.hpp"

#include <bit>

namespace headroom::memory::detail {

std::size_t HostBlockCache::block_bytes(std::size_t bytes) {
  if (bytes < kMinBytes) return bytes;
  const int octave = std::bit_width(bytes) - 1;             // floor(log2(bytes)) >= 20
  const std::size_t step = std::size_t{1} << (octave - 3);  // 8 classes per octave
  return (bytes + step - 1) & ~(step - 1);
}

void* HostBlockCache::take(std::size_t block, std::size_t* taken) {
  if (block < kMinBytes || !enabled()) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  // The smallest cached block that holds the request, if it is at most two classes up.
  const std::size_t largest = block + block / 4;
  for (auto it = free_blocks_.lower_bound(block); it != free_blocks_.end() && it->first <= largest;
       ++it) {
    if (it->second.empty()) continue;
    void* base = it->second.back();
    it->second.pop_back();
    cached_.fetch_sub(static_cast<std::int64_t>(it->first), std::memory_order_relaxed);
    *taken = it->first;
    return base;
  }
  return nullptr;
}

bool HostBlockCache::offer(void* base, std::size_t block, std::int64_t limit, std::int64_t live) {
  if (block < kMinBytes || !enabled()) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto size = static_cast<std::int64_t>(block);
  if (cached_.load(std::memory_order_relaxed) + live + size > limit) return false;
  free_blocks_[block].push_back(base);
  cached_.fetch_add(size, std::memory_order_relaxed);
  return true;
}

void HostBlockCache::shrink_to(std::int64_t limit, std::int64_t live, void (*release)(void*)) {
  if (cached_bytes() == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  // Largest blocks first: the fewest frees that make room.
  while (cached_.load(std::memory_order_relaxed) > 0 &&
         cached_.load(std::memory_order_relaxed) + live > limit) {
    auto largest = free_blocks_.rbegin();
    while (largest != free_blocks_.rend() && largest->second.empty()) ++largest;
    if (largest == free_blocks_.rend()) break;
    release(largest->second.back());
    largest->second.pop_back();
    cached_.fetch_sub(static_cast<std::int64_t>(largest->first), std::memory_order_relaxed);
  }
}

std::int64_t HostBlockCache::clear(void (*release)(void*)) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::int64_t released = 0;
  for (auto& [block, bases] : free_blocks_) {
    for (void* base : bases) release(base);
    released += static_cast<std::int64_t>(block * bases.size());
  }
  free_blocks_.clear();
  cached_.fetch_sub(released, std::memory_order_relaxed);
  return released;
}

}  // namespace headroom::memory::detail
