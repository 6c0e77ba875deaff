// The counting CPU allocator behind install_counting_cpu_allocator().
//
// Layout: every non-empty allocation is taken from the previously installed allocator with
// kHeaderBytes extra in front, and the requested size is written there. The DataPtr handed to
// LibTorch has data == context (the bytes after the header), so the free path finds the size by
// stepping back, and the allocator stays "simple" in c10's sense: raw_allocate/raw_deallocate
// and copy-on-write lazy clones (which assert context == data when they steal the last
// reference) keep working. Keeping the size in a separately allocated context object would break
// both. kHeaderBytes is c10's CPU alignment, so the data keeps the alignment LibTorch expects.
#include "counting_cpu_allocator.hpp"

#include "host_block_cache.hpp"

#include <malloc.h>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/alignment.h>
#include <c10/util/Exception.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>

#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/util/allocation_site.hpp"

namespace headroom::memory {
namespace {

// Each block starts with a header: the requested bytes, then the block's own size (a cached
// block reused for a smaller request is larger than the request's class).
constexpr std::size_t kHeaderBytes = c10::gAlignment;
static_assert(kHeaderBytes >= 2 * sizeof(std::size_t));

// Wins over c10's default CPU allocator (registered with priority 0) and over anything that
// registers later with a lower priority, so counting cannot be silently switched off.
constexpr std::uint8_t kPriority = std::numeric_limits<std::uint8_t>::max();

// Largest request whose size still fits the int64 counters with the header added.
constexpr std::size_t kMaxRequest =
    static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max()) - kHeaderBytes;

struct Counters {
  // current and peak are written on every allocation from any thread: separate cache lines.
  alignas(c10::hardware_destructive_interference_size) std::atomic<std::int64_t> current{0};
  alignas(c10::hardware_destructive_interference_size) std::atomic<std::int64_t> peak{0};
  std::atomic<std::int64_t> high_water{0};  // like peak, never reset: bounds the block cache
  std::atomic<std::int64_t> allocations{0};
  std::atomic<std::int64_t> refusals{0};
  std::atomic<std::int64_t> budget{0};
  // Fault injection: allocations of at least inject_min_bytes skip inject_skip more, then fail
  // inject_count times.
  std::atomic<std::int64_t> inject_skip{0};
  std::atomic<std::int64_t> inject_count{0};
  std::atomic<std::int64_t> inject_min_bytes{0};
  std::atomic<std::int64_t> injected{0};
};

// Constant-initialised and trivially destructible: tensors freed during static destruction
// (after main returns) still find working counters.
constinit Counters g_counters;
constinit std::atomic<c10::DeleterFnPtr> g_inner_deleter{nullptr};

void raise(std::atomic<std::int64_t>& counter, std::int64_t value) {
  std::int64_t seen = counter.load(std::memory_order_relaxed);
  while (seen < value && !counter.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

void raise_peak(std::int64_t value) {
  raise(g_counters.peak, value);
  raise(g_counters.high_water, value);
}

// Never destroyed: blocks are freed through it during static destruction too.
detail::HostBlockCache& block_cache() {
  static auto* cache = new detail::HostBlockCache();
  return *cache;
}

// What cached + live tensor bytes may reach: the phase's live high-water mark (`live` included:
// an allocation in flight has not raised it yet) and a quarter more, and never more than the
// budget. With exact reuse a step's blocks circulate between the cache and the live tensors
// within the high-water mark; the quarter is for blocks a batch of another size leaves unused
// (measured: a bound of 2x held ~2x the tensor peak resident, docs/memory.md). A default budget
// is the host's memory: without the first bound the cache could grow into it.
std::int64_t cache_limit(std::int64_t live) {
  const std::int64_t budget = g_counters.budget.load(std::memory_order_relaxed);
  const std::int64_t high = std::max(live, g_counters.high_water.load(std::memory_order_relaxed));
  const std::int64_t slack = high + high / 4;
  return budget > 0 ? std::min(budget, slack) : slack;
}

void free_block(void* base) { g_inner_deleter.load(std::memory_order_acquire)(base); }

// Adds `bytes` to current_bytes unless that would exceed the budget; returns the new value.
// A compare-exchange loop rather than load-check-add, so that concurrent allocations cannot
// jointly overshoot the budget.
// The site fault injection is limited to (empty: every allocation). Written only by
// inject_cpu_allocation_failures, before training starts; read by every allocating thread.
std::string& injection_site() {
  static std::string site;
  return site;
}

bool at_injection_site() {
  const auto& site = injection_site();
  if (site.empty()) return true;
  const char* current = util::current_allocation_site;
  return current != nullptr && site == current;
}

void maybe_inject_failure(std::int64_t bytes) {
  if (g_counters.inject_count.load(std::memory_order_relaxed) <= 0 ||
      bytes < g_counters.inject_min_bytes.load(std::memory_order_relaxed) || !at_injection_site())
    return;
  if (g_counters.inject_skip.fetch_sub(1, std::memory_order_relaxed) > 0) return;
  if (g_counters.inject_count.fetch_sub(1, std::memory_order_relaxed) <= 0) return;
  g_counters.injected.fetch_add(1, std::memory_order_relaxed);
  const char* site = util::current_allocation_site;
  TORCH_CHECK_WITH(OutOfMemoryError, false, "injected CPU allocation failure (", bytes,
                   " bytes in ", site != nullptr ? site : "an unnamed site",
                   "; HEADROOM_INJECT_OOM)");
}

std::int64_t reserve(std::int64_t bytes) {
  maybe_inject_failure(bytes);
  std::int64_t current = g_counters.current.load(std::memory_order_relaxed);
  while (true) {
    const std::int64_t budget = g_counters.budget.load(std::memory_order_relaxed);
    // budget - current cannot overflow (both are in [0, INT64_MAX]); current + bytes could.
    if (budget > 0 && bytes > budget - current) {
      g_counters.refusals.fetch_add(1, std::memory_order_relaxed);
      TORCH_CHECK_WITH(
          OutOfMemoryError, false, "CPU tensor budget exceeded: tried to ", "allocate ", bytes,
          " bytes with ", current, " bytes of CPU tensors live and a budget of ", budget,
          " bytes (--memory-budget sets it; by default, what --host-memory-budget leaves)");
    }
    if (g_counters.current.compare_exchange_weak(current, current + bytes,
                                                 std::memory_order_relaxed)) {
      return current + bytes;
    }
  }
}

void release_counted(void* data) {
  if (data == nullptr) {
    return;  // zero-size allocation
  }
  std::byte* base = static_cast<std::byte*>(data) - kHeaderBytes;
  std::size_t bytes = 0;
  std::size_t block = 0;
  std::memcpy(&bytes, base, sizeof(bytes));
  std::memcpy(&block, base + sizeof(bytes), sizeof(block));
  const auto live =
      g_counters.current.fetch_sub(static_cast<std::int64_t>(bytes), std::memory_order_relaxed) -
      static_cast<std::int64_t>(bytes);
  if (!block_cache().offer(base, block, cache_limit(live), live)) free_block(base);
}

class CountingCpuAllocator final : public c10::Allocator {
 public:
  explicit CountingCpuAllocator(c10::Allocator* inner) : inner_(inner) {}

  c10::DataPtr allocate(std::size_t n) override {
    const c10::Device cpu(c10::DeviceType::CPU);
    if (n == 0) {
      // Like c10's default allocator: a null pointer, still carrying the raw deleter.
      g_counters.allocations.fetch_add(1, std::memory_order_relaxed);
      return {nullptr, nullptr, &release_counted, cpu};
    }
    TORCH_CHECK_WITH(OutOfMemoryError, n <= kMaxRequest, "CPU tensor allocation of ", n,
                     " bytes is too large");
    const auto bytes = static_cast<std::int64_t>(n);
    const std::int64_t reserved = reserve(bytes);
    void* base = nullptr;
    std::size_t block = detail::HostBlockCache::block_bytes(n + kHeaderBytes);
    try {
      base = acquire_block(block, reserved);
    } catch (...) {
      g_counters.current.fetch_sub(bytes, std::memory_order_relaxed);
      throw;
    }
    raise_peak(reserved);
    g_counters.allocations.fetch_add(1, std::memory_order_relaxed);
    std::memcpy(base, &n, sizeof(n));
    std::memcpy(static_cast<std::byte*>(base) + sizeof(n), &block, sizeof(block));
    void* data = static_cast<std::byte*>(base) + kHeaderBytes;
    return {data, data, &release_counted, cpu};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &release_counted; }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }

 private:
  // A cached block of the class or up to two above (`block` becomes its size), or a fresh one
  // after making room for it under the cache's bound; a failed fresh allocation is retried once
  // with the cache emptied.
  void* acquire_block(std::size_t& block, std::int64_t live) {
    auto& cache = block_cache();
    std::size_t taken = 0;
    if (void* reused = cache.take(block, &taken)) {
      block = taken;
      return reused;
    }
    cache.shrink_to(cache_limit(live), live, &free_block);
    try {
      return inner_->raw_allocate(block);
    } catch (const c10::Error&) {
      if (cache.clear(&free_block) == 0) throw;
      return inner_->raw_allocate(block);
    }
  }

  c10::Allocator* inner_;
};

std::once_flag g_install_once;
CountingCpuAllocator* g_allocator = nullptr;

void install_once() {
  c10::Allocator* inner = c10::GetCPUAllocator();
  const c10::DeleterFnPtr inner_deleter = inner->raw_deleter();
  if (inner_deleter == nullptr) {
    throw std::runtime_error(
        "cannot count CPU tensor memory: the installed CPU allocator does not support "
        "raw allocation");
  }
  g_inner_deleter.store(inner_deleter, std::memory_order_release);
  // Never destroyed: storages keep a pointer to their allocator and may outlive any scope.
  auto* allocator = new CountingCpuAllocator(inner);
  c10::SetCPUAllocator(allocator, kPriority);
  if (c10::GetCPUAllocator() != allocator) {
    throw std::runtime_error(
        "cannot count CPU tensor memory: another CPU allocator holds the highest "
        "priority");
  }
  g_allocator = allocator;
}

}  // namespace

void install_counting_cpu_allocator() { std::call_once(g_install_once, install_once); }

bool counting_cpu_allocator_installed() {
  return g_allocator != nullptr && c10::GetCPUAllocator() == g_allocator;
}

void set_cpu_tensor_budget(std::int64_t bytes) {
  if (bytes < 0) {
    throw std::invalid_argument("negative CPU tensor budget: " + std::to_string(bytes));
  }
  g_counters.budget.store(bytes, std::memory_order_relaxed);
}

void inject_cpu_allocation_failures(std::int64_t skip, std::int64_t count, std::int64_t min_bytes,
                                    std::string_view site) {
  if (skip < 0 || count < 0 || min_bytes < 0)
    throw std::invalid_argument("fault injection needs non-negative skip, count, bytes");
  injection_site() = std::string(site);
  g_counters.inject_min_bytes.store(min_bytes, std::memory_order_relaxed);
  g_counters.inject_skip.store(skip, std::memory_order_relaxed);
  g_counters.inject_count.store(count, std::memory_order_relaxed);
}

void inject_cpu_allocation_failures_from_environment() {
  const char* spec = std::getenv("HEADROOM_INJECT_OOM");
  if (spec == nullptr || *spec == '\0') return;
  long long skip = 0, count = 0, min_bytes = 0;
  int consumed = 0;
  const int fields = std::sscanf(spec, "%lld:%lld:%lld%n", &skip, &count, &min_bytes, &consumed);
  const std::string_view rest = fields == 3 ? std::string_view(spec + consumed) : "";
  const bool site_given = rest.size() > 1 && rest.front() == ':';
  if (fields != 3 || (!rest.empty() && !site_given))
    throw std::invalid_argument(std::string("HEADROOM_INJECT_OOM='") + spec +
                                "': expected SKIP:COUNT:MIN_BYTES[:SITE] (e.g. 200:3:1048576 or "
                                "0:1:4:collate)");
  inject_cpu_allocation_failures(skip, count, min_bytes,
                                 site_given ? rest.substr(1) : std::string_view());
}

std::int64_t cpu_tensor_budget() { return g_counters.budget.load(std::memory_order_relaxed); }

CpuTensorMemory cpu_tensor_memory() {
  CpuTensorMemory memory;
  memory.current_bytes = g_counters.current.load(std::memory_order_relaxed);
  memory.peak_bytes = g_counters.peak.load(std::memory_order_relaxed);
  memory.allocations = g_counters.allocations.load(std::memory_order_relaxed);
  memory.refusals = g_counters.refusals.load(std::memory_order_relaxed);
  memory.cached_bytes = block_cache().cached_bytes();
  return memory;
}

// The block cache's bound holds only if a block it hands back to glibc goes back to the kernel.
// glibc's mmap threshold is dynamic: once a mmapped block is freed it rises to that block's size
// (up to 32 MiB), and from then on blocks below it come from the heap and stay there when freed,
// outside the tensors and the cache. Measured (ClaimsHostRss.*, GAT teacher under a 244 MiB
// budget): a 300 MiB heap, the anonymous RSS 452 MiB above the baseline; with the threshold
// fixed at the cache's smallest block (setting it turns the dynamic one off), 276 MiB.
// Smaller blocks still come from the heap, where the next step reuses them.
void keep_freed_host_memory() {
  ::mallopt(M_MMAP_THRESHOLD, static_cast<int>(detail::HostBlockCache::kMinBytes));
  block_cache().enable();
}

std::int64_t release_cached_host_memory() {
  const auto released = block_cache().clear(&free_block);
  // And what glibc's heaps hold free (every arena, not only the main one). Past its dynamic mmap
  // threshold (it rises to the largest block freed, up to 32 MiB) glibc serves large blocks from
  // its heaps and keeps them when freed: measured on the main job, the anonymous memory outside
  // the tensors grew from 79 to 435 MiB over the stages without this.
  ::malloc_trim(0);
  // A new phase: its own high-water mark bounds the cache from here.
  g_counters.high_water.store(g_counters.current.load(std::memory_order_relaxed),
                              std::memory_order_relaxed);
  raise(g_counters.high_water, g_counters.current.load(std::memory_order_relaxed));
  return released;
}

namespace detail {

void reset_cpu_tensor_peak() {
  g_counters.peak.store(g_counters.current.load(std::memory_order_relaxed),
                        std::memory_order_relaxed);
  // An allocation racing with the store above may have raised current after it was read and
  // then lost its own peak update to the store; re-raising keeps peak >= current.
  raise_peak(g_counters.current.load(std::memory_order_relaxed));
}

}  // namespace detail
}  // namespace headroom::memory
