// The counting allocator's cache of freed blocks (keep_freed_host_memory), through tensors.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "headroom/memory/tensor_memory_meter.hpp"

namespace headroom::memory {
namespace {

constexpr std::int64_t kMiB = 1 << 20;

at::Tensor bytes(std::int64_t count) { return torch::empty({count}, torch::kUInt8); }

class HostBlockCache : public ::testing::Test {
 protected:
  void SetUp() override {
    install_counting_cpu_allocator();
    keep_freed_host_memory();
    release_cached_host_memory();
  }
  void TearDown() override {
    set_cpu_tensor_budget(0);
    release_cached_host_memory();
  }
};

TEST_F(HostBlockCache, AFreedBlockIsReusedForARequestOfTheSameClass) {
  // Classes are 1/8 of an octave: 512 KiB wide between 4 and 8 MiB, so 6 MiB + 100 KiB and
  // 6 MiB + 96 KiB share the class ending at 6.5 MiB.
  auto first = bytes(6 * kMiB + 100 * 1024);
  const void* address = first.data_ptr();
  const auto live = cpu_tensor_memory().current_bytes;
  first.reset();
  EXPECT_GE(cpu_tensor_memory().cached_bytes, 6 * kMiB);
  auto second = bytes(6 * kMiB + 96 * 1024);
  EXPECT_EQ(second.data_ptr(), address);
  EXPECT_EQ(cpu_tensor_memory().cached_bytes, 0);
  // Live bytes count the request, not the block.
  EXPECT_EQ(cpu_tensor_memory().current_bytes, live - 4096);
}

TEST_F(HostBlockCache, SmallBlocksAreLeftToMalloc) {
  auto small = bytes(256 * 1024);
  small.reset();
  EXPECT_EQ(cpu_tensor_memory().cached_bytes, 0);
}

TEST_F(HostBlockCache, ADifferentClassMissesTheCache) {
  auto first = bytes(8 * kMiB);
  const void* address = first.data_ptr();
  first.reset();
  auto larger = bytes(12 * kMiB);
  EXPECT_NE(larger.data_ptr(), address);
  // 9 cached + 12 live would pass a quarter above the 12 MiB peak: the unused block was freed.
  const auto memory = cpu_tensor_memory();
  EXPECT_LE(memory.cached_bytes + memory.current_bytes, memory.peak_bytes + memory.peak_bytes / 4);
}

TEST_F(HostBlockCache, CachedPlusLiveStaysWithinTheBudget) {
  set_cpu_tensor_budget(64 * kMiB + cpu_tensor_memory().current_bytes);
  auto first = bytes(40 * kMiB);  // a 44 MiB block (4 MiB classes between 32 and 64 MiB)
  first.reset();
  EXPECT_EQ(cpu_tensor_memory().cached_bytes, 44 * kMiB);
  // 24 MiB in another class: 44 cached + 24 live would pass 64, so the 44 MiB block goes.
  auto second = bytes(24 * kMiB);
  const auto memory = cpu_tensor_memory();
  EXPECT_EQ(memory.cached_bytes, 0);
  EXPECT_LE(memory.cached_bytes + memory.current_bytes, cpu_tensor_budget());
}

TEST_F(HostBlockCache, AFreeThatWouldPassTheBudgetIsNotCached) {
  set_cpu_tensor_budget(48 * kMiB + cpu_tensor_memory().current_bytes);
  auto a = bytes(30 * kMiB);  // a 32 MiB block
  auto b = bytes(17 * kMiB);  // an 18 MiB block
  a.reset();                  // 17 live + 32 cached would pass 48: freed, not kept
  EXPECT_EQ(cpu_tensor_memory().cached_bytes, 0);
  b.reset();  // nothing live: kept
  EXPECT_EQ(cpu_tensor_memory().cached_bytes, 18 * kMiB);
}

TEST_F(HostBlockCache, ARequestTakesABlockUpToTwoClassesLarger) {
  // 8 MiB + the header is a 9 MiB block (1 MiB classes between 8 and 16 MiB); 7 MiB + the header
  // a 7.5 MiB one, two classes below: it takes the 9 MiB block, which goes back as 9 MiB.
  auto first = bytes(8 * kMiB);
  const void* address = first.data_ptr();
  first.reset();
  EXPECT_EQ(cpu_tensor_memory().cached_bytes, 9 * kMiB);
  auto smaller = bytes(7 * kMiB);
  EXPECT_EQ(smaller.data_ptr(), address);
  EXPECT_EQ(cpu_tensor_memory().cached_bytes, 0);
  smaller.reset();
  EXPECT_EQ(cpu_tensor_memory().cached_bytes, 9 * kMiB);
  // Three classes below (6.5 MiB) is too far: a fresh block (and the 9 MiB one, which with it
  // would pass a quarter above the phase's 8 MiB peak, is freed).
  auto much_smaller = bytes(6 * kMiB);
  EXPECT_NE(much_smaller.data_ptr(), address);
  EXPECT_EQ(cpu_tensor_memory().cached_bytes, 0);
}

TEST_F(HostBlockCache, AGenerousBudgetStillBoundsTheCacheByAQuarterAboveThePeak) {
  // The default budget is the host's memory: the cache must not grow into it. Blocks of six
  // different classes, one live at a time, would cache ~50 MiB with no other bound.
  set_cpu_tensor_budget(std::int64_t{1} << 30);
  for (const std::int64_t mib : {3, 5, 7, 9, 11, 13}) bytes(mib * kMiB);
  const auto memory = cpu_tensor_memory();
  EXPECT_GT(memory.cached_bytes, 0);
  EXPECT_LE(memory.cached_bytes + memory.current_bytes, memory.peak_bytes + memory.peak_bytes / 4);
  EXPECT_LT(memory.cached_bytes, 20 * kMiB);
}

TEST_F(HostBlockCache, ReleaseStartsAPhaseWhoseOwnPeakBoundsTheCache) {
  bytes(64 * kMiB);  // an earlier phase's peak
  EXPECT_GT(release_cached_host_memory(), 64 * kMiB);
  reset_peak();
  // Now blocks of 2 to 4 MiB: bounded by this phase's peak, not by the 64 MiB before it.
  for (const std::int64_t kib : {2048, 2600, 3100, 3600, 4096}) bytes(kib * 1024);
  const auto memory = cpu_tensor_memory();
  EXPECT_LE(memory.cached_bytes + memory.current_bytes, memory.peak_bytes + memory.peak_bytes / 4);
  EXPECT_LT(memory.cached_bytes, 6 * kMiB);
}

TEST_F(HostBlockCache, ReleaseEmptiesTheCacheAndReportsTheBytes) {
  auto a = bytes(4 * kMiB);
  auto b = bytes(6 * kMiB);
  a.reset();
  b.reset();
  const auto cached = cpu_tensor_memory().cached_bytes;
  EXPECT_GE(cached, 10 * kMiB);
  EXPECT_LE(cached, 10 * kMiB + 10 * kMiB / 8);  // at most 12.5% rounding per block
  EXPECT_EQ(release_cached_host_memory(), cached);
  EXPECT_EQ(cpu_tensor_memory().cached_bytes, 0);
}

TEST_F(HostBlockCache, ReusedBlocksHoldTheirData) {
  auto first = torch::full({4 * kMiB / 4}, 7.0f);
  first.reset();
  auto second = torch::arange(4 * kMiB / 4, torch::kFloat32);
  EXPECT_EQ(second[12345].item<float>(), 12345.0f);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(second.data_ptr()) % c10::gAlignment, 0u);
}

}  // namespace
}  // namespace headroom::memory
