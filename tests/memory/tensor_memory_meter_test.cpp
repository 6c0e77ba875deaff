// The tests share one process when the binary runs without ctest, so they compare deltas against
// the counters read at their start and never assume a zero baseline.
#include "headroom/memory/tensor_memory_meter.hpp"

#include <c10/core/CPUAllocator.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace headroom::memory {
namespace {

constexpr std::int64_t kFloatBytes = 4;

at::Tensor floats(std::int64_t count) { return torch::empty({count}, torch::kFloat32); }

std::int64_t current() { return cpu_tensor_memory().current_bytes; }

class TensorMemoryMeter : public ::testing::Test {
 protected:
  void SetUp() override {
    install_counting_cpu_allocator();
    ASSERT_TRUE(counting_cpu_allocator_installed());
  }
  // A failed assertion must not leave a budget behind for the tests that follow.
  void TearDown() override { set_cpu_tensor_budget(0); }
};

TEST_F(TensorMemoryMeter, CountsTheRequestedBytesOfATensorAndReturnsThemOnFree) {
  const CpuTensorMemory before = cpu_tensor_memory();
  at::Tensor tensor = floats(1'000'000);
  EXPECT_EQ(current() - before.current_bytes, 1'000'000 * kFloatBytes);
  EXPECT_EQ(cpu_tensor_memory().allocations - before.allocations, 1);
  tensor.reset();
  EXPECT_EQ(current(), before.current_bytes);
}

TEST_F(TensorMemoryMeter, InstallingTwiceKeepsOneCountingLayer) {
  c10::Allocator* installed = c10::GetCPUAllocator();
  install_counting_cpu_allocator();
  EXPECT_EQ(c10::GetCPUAllocator(), installed);
  const std::int64_t before = current();
  at::Tensor tensor = floats(1000);
  EXPECT_EQ(current() - before, 1000 * kFloatBytes);  // a second layer would count twice
}

TEST_F(TensorMemoryMeter, DataKeepsTorchsCpuAlignment) {
  at::Tensor tensor = floats(3);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(tensor.data_ptr()) % c10::gAlignment, 0u);
}

TEST_F(TensorMemoryMeter, ZeroSizeTensorsCostNothingAndHaveNoData) {
  const CpuTensorMemory before = cpu_tensor_memory();
  at::Tensor empty = floats(0);
  EXPECT_EQ(empty.data_ptr(), nullptr);
  EXPECT_EQ(current(), before.current_bytes);
  EXPECT_EQ(cpu_tensor_memory().allocations - before.allocations, 1);
  empty.reset();
  EXPECT_EQ(current(), before.current_bytes);
}

TEST_F(TensorMemoryMeter, TensorDataIsUsable) {
  at::Tensor a = torch::arange(1000, torch::kFloat64);
  at::Tensor b = a.clone();
  b.mul_(2.0);
  const double sum = b.sum().item<double>();
  EXPECT_DOUBLE_EQ(sum, 2.0 * 999.0 * 1000.0 / 2.0);
}

TEST_F(TensorMemoryMeter, ResizeMovesTheCountToTheNewSize) {
  const std::int64_t before = current();
  at::Tensor tensor = floats(100);
  tensor.resize_({5000});
  EXPECT_EQ(current() - before, 5000 * kFloatBytes);
  tensor.reset();
  EXPECT_EQ(current(), before);
}

TEST_F(TensorMemoryMeter, RawAllocationInterfaceIsCountedAndFreed) {
  c10::Allocator* allocator = c10::GetCPUAllocator();
  ASSERT_NE(allocator->raw_deleter(), nullptr);
  const std::int64_t before = current();
  void* raw = allocator->raw_allocate(12'345);
  ASSERT_NE(raw, nullptr);
  std::memset(raw, 0xab, 12'345);
  EXPECT_EQ(current() - before, 12'345);
  allocator->raw_deallocate(raw);
  EXPECT_EQ(current(), before);
}

TEST_F(TensorMemoryMeter, LazyCloneSharesThenCopiesOnWrite) {
  const std::int64_t before = current();
  at::Tensor original = torch::full({1000}, 3.0F);
  at::Tensor copy = at::_lazy_clone(original);
  EXPECT_EQ(current() - before, 1000 * kFloatBytes);  // still shared
  copy.add_(1.0F);                                    // materialises a private copy
  EXPECT_EQ(current() - before, 2 * 1000 * kFloatBytes);
  EXPECT_FLOAT_EQ(original[7].item<float>(), 3.0F);
  EXPECT_FLOAT_EQ(copy[7].item<float>(), 4.0F);
  original.reset();
  copy.reset();
  EXPECT_EQ(current(), before);
}

TEST_F(TensorMemoryMeter, LazyCloneOfAFreedOriginalStealsTheData) {
  const std::int64_t before = current();
  at::Tensor original = torch::full({1000}, 3.0F);
  at::Tensor copy = at::_lazy_clone(original);
  original.reset();
  copy.add_(1.0F);  // the last reference takes the data over: no copy
  EXPECT_EQ(current() - before, 1000 * kFloatBytes);
  EXPECT_FLOAT_EQ(copy[999].item<float>(), 4.0F);
  copy.reset();
  EXPECT_EQ(current(), before);
}

TEST_F(TensorMemoryMeter, PeakIsTheHighestLiveTotal) {
  const std::int64_t base = current();
  reset_peak();
  EXPECT_EQ(cpu_tensor_memory().peak_bytes, base);

  // Phase 1: live totals 1000, 3000, 6000, then 4000 after freeing b, then 9000.
  at::Tensor a = floats(1000);
  at::Tensor b = floats(2000);
  at::Tensor c = floats(3000);
  b.reset();
  at::Tensor d = floats(5000);
  EXPECT_EQ(cpu_tensor_memory().peak_bytes, base + 9000 * kFloatBytes);

  // Phase 2: from 9000 down to 1000, then up to 1000 + 4000: the peak since the reset is the
  // 9000 live at the reset itself.
  c.reset();
  d.reset();
  reset_peak();
  at::Tensor e = floats(4000);
  EXPECT_EQ(cpu_tensor_memory().peak_bytes, base + 5000 * kFloatBytes);
  e.reset();
  a.reset();
  EXPECT_EQ(cpu_tensor_memory().peak_bytes, base + 5000 * kFloatBytes);
  EXPECT_EQ(current(), base);
}

TEST_F(TensorMemoryMeter, ResetPeakSetsPeakToCurrent) {
  const std::int64_t base = current();
  { at::Tensor big = floats(250'000); }
  EXPECT_GE(cpu_tensor_memory().peak_bytes, base + 250'000 * kFloatBytes);
  at::Tensor live = floats(10);
  reset_peak();
  const CpuTensorMemory after = cpu_tensor_memory();
  EXPECT_EQ(after.peak_bytes, after.current_bytes);
  EXPECT_EQ(after.peak_bytes, base + 10 * kFloatBytes);
}

TEST_F(TensorMemoryMeter, BudgetRefusesAllocationsPastItWithOutOfMemoryError) {
  const std::int64_t base = current();
  const std::int64_t budget = base + 1'000'000;
  set_cpu_tensor_budget(budget);
  EXPECT_EQ(cpu_tensor_budget(), budget);

  at::Tensor first = floats(100'000);   // 400,000 bytes: fits
  at::Tensor second = floats(150'000);  // 600,000 more: exactly at the budget, still fits
  EXPECT_EQ(current(), budget);

  const std::int64_t refusals = cpu_tensor_memory().refusals;
  const std::int64_t allocations = cpu_tensor_memory().allocations;
  std::string message;
  try {
    at::Tensor one_byte_too_many = torch::empty({1}, torch::kUInt8);
    ADD_FAILURE() << "an allocation past the budget succeeded";
  } catch (const c10::OutOfMemoryError& error) {
    message = error.what();
  }
  EXPECT_EQ(cpu_tensor_memory().refusals - refusals, 1);
  EXPECT_EQ(cpu_tensor_memory().allocations, allocations);
  EXPECT_EQ(current(), budget);  // the refused bytes were never counted
  EXPECT_NE(message.find("allocate 1 bytes"), std::string::npos) << message;
  EXPECT_NE(message.find(std::to_string(budget) + " bytes of CPU tensors live"), std::string::npos)
      << message;
  EXPECT_NE(message.find("budget of " + std::to_string(budget)), std::string::npos) << message;
  // The flag that raises it, so that the message says what to do.
  EXPECT_NE(message.find("--memory-budget"), std::string::npos) << message;

  // Freeing makes room again.
  first.reset();
  at::Tensor third = floats(100'000);
  EXPECT_EQ(current(), budget);

  // Removing the budget lifts the limit.
  set_cpu_tensor_budget(0);
  EXPECT_EQ(cpu_tensor_budget(), 0);
  at::Tensor beyond = floats(500'000);
  EXPECT_EQ(current(), budget + 500'000 * kFloatBytes);
}

TEST_F(TensorMemoryMeter, BudgetAppliesToTorchOperationsToo) {
  const std::int64_t base = current();
  at::Tensor input = floats(100'000);
  set_cpu_tensor_budget(base + 100'000 * kFloatBytes + 1000);
  EXPECT_THROW((void)(input * 2.0F), c10::OutOfMemoryError);
  set_cpu_tensor_budget(0);
  EXPECT_EQ(current(), base + 100'000 * kFloatBytes);
}

TEST_F(TensorMemoryMeter, NegativeBudgetIsRejected) {
  EXPECT_THROW(set_cpu_tensor_budget(-1), std::invalid_argument);
  EXPECT_EQ(cpu_tensor_budget(), 0);
}

TEST_F(TensorMemoryMeter, ConcurrentAllocationsBalance) {
  const CpuTensorMemory before = cpu_tensor_memory();
  constexpr int kThreads = 8;
  constexpr int kRounds = 300;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &failures] {
      try {
        std::vector<at::Tensor> held;
        for (int round = 0; round < kRounds; ++round) {
          held.push_back(floats(1 + (t * 7919 + round * 104729) % 20'000));
          if (round % 3 == 2) {
            // Free out of allocation order, keep some alive across rounds.
            held.erase(held.begin());
            held.erase(held.begin());
          }
        }
      } catch (...) {
        failures.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(failures.load(), 0);
  const CpuTensorMemory after = cpu_tensor_memory();
  EXPECT_EQ(after.current_bytes, before.current_bytes);
  EXPECT_EQ(after.allocations - before.allocations, kThreads * kRounds);
}

TEST_F(TensorMemoryMeter, ConcurrentAllocationsNeverOvershootTheBudget) {
  const std::int64_t base = current();
  // Room for 10 of the 32 buffers the threads would hold at once if they all ran together.
  const std::int64_t budget = base + 10 * 40'000;
  set_cpu_tensor_budget(budget);
  reset_peak();
  const std::int64_t refusals_before = cpu_tensor_memory().refusals;
  constexpr int kThreads = 8;
  std::atomic<std::int64_t> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&refused] {
      for (int round = 0; round < 200; ++round) {
        try {
          std::vector<at::Tensor> held;
          for (int i = 0; i < 4; ++i) {
            held.push_back(torch::empty({40'000}, torch::kUInt8));
          }
        } catch (const c10::OutOfMemoryError&) {
          refused.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  set_cpu_tensor_budget(0);
  EXPECT_LE(cpu_tensor_memory().peak_bytes, budget);
  EXPECT_EQ(cpu_tensor_memory().refusals - refusals_before, refused.load());
  EXPECT_EQ(current(), base);
}

TEST(TensorMemoryMeterBeforeInstall, TensorsFromBeforeInstallAreFreedThroughTheirOwnDeleter) {
  if (counting_cpu_allocator_installed()) {
    GTEST_SKIP() << "the allocator was installed earlier in this process";
  }
  at::Tensor old = floats(10'000);
  install_counting_cpu_allocator();
  const std::int64_t before = current();
  old.reset();
  EXPECT_EQ(current(), before);
  at::Tensor fresh = floats(10'000);
  EXPECT_EQ(current() - before, 10'000 * kFloatBytes);
}

TEST(ProcessMemory, RssIsPositiveAndGrowsWhenABufferIsTouched) {
  // The kernel batches its RSS counters per CPU: readings are accurate to a few pages only.
  constexpr std::int64_t kSlack = std::int64_t{16} << 20;
  constexpr std::size_t kBytes = std::size_t{256} << 20;
  const auto buffer_bytes = static_cast<std::int64_t>(kBytes);

  const std::int64_t before = process_rss_bytes();
  EXPECT_GT(before, 0);
  std::unique_ptr<char[]> buffer(new char[kBytes]);
  std::memset(buffer.get(), 1, kBytes);
  // Tell the compiler the buffer is read, so that the allocation and the writes stay.
  asm volatile("" : : "r"(buffer.get()) : "memory");
  const std::int64_t during = process_rss_bytes();
  EXPECT_GE(during - before, buffer_bytes / 2);
  EXPECT_LE(during - before, buffer_bytes * 2);
  EXPECT_GE(process_peak_rss_bytes(), during - kSlack);

  // The high-water mark remembers the buffer after it is gone (glibc returns a buffer this large
  // to the kernel at once).
  buffer.reset();
  EXPECT_LT(process_rss_bytes(), during - buffer_bytes / 2);
  EXPECT_GE(process_peak_rss_bytes(), during - kSlack);
}

TEST(CudaTensorMemory, UnavailableWithoutACudaDevice) {
  if (torch::cuda::is_available()) {
    GTEST_SKIP() << "a CUDA device is present";
  }
  const CudaTensorMemory cuda = cuda_tensor_memory();
  EXPECT_FALSE(cuda.available);
  EXPECT_EQ(cuda.allocated_bytes, 0);
  EXPECT_EQ(cuda.reserved_bytes, 0);
  EXPECT_FALSE(memory_snapshot(0).cuda.available);
  reset_peak(0);  // harmless without a device
}

TEST(CudaTensorMemory, TracksCudaTensors) {
  if (!torch::cuda::is_available()) {
    GTEST_SKIP() << "no CUDA device";
  }
  EXPECT_THROW(cuda_tensor_memory(torch::cuda::device_count()), std::out_of_range);
  const CudaTensorMemory before = cuda_tensor_memory(0);
  EXPECT_TRUE(before.available);
  constexpr std::int64_t kBytes = std::int64_t{64} << 20;  // a multiple of the 512-byte rounding
  at::Tensor tensor = torch::empty({kBytes}, torch::dtype(torch::kUInt8).device(torch::kCUDA, 0));
  const CudaTensorMemory during = cuda_tensor_memory(0);
  EXPECT_EQ(during.allocated_bytes - before.allocated_bytes, kBytes);
  EXPECT_GE(during.reserved_bytes, during.allocated_bytes);
  EXPECT_GE(during.peak_allocated_bytes, during.allocated_bytes);
  tensor.reset();
  const CudaTensorMemory after = cuda_tensor_memory(0);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_GE(after.peak_allocated_bytes, before.allocated_bytes + kBytes);
  reset_peak(0);
  EXPECT_EQ(cuda_tensor_memory(0).peak_allocated_bytes, after.allocated_bytes);
}

TEST(MemorySnapshot, JsonCarriesEveryField) {
  install_counting_cpu_allocator();
  at::Tensor live = floats(1234);
  const MemorySnapshot snapshot = memory_snapshot();
  EXPECT_FALSE(snapshot.cuda.available);  // -1: no CUDA statistics requested
  EXPECT_GE(snapshot.cpu.current_bytes, 1234 * kFloatBytes);
  EXPECT_GT(snapshot.rss_bytes, 0);
  EXPECT_GE(snapshot.peak_rss_bytes, snapshot.rss_bytes);

  const nlohmann::json json = snapshot;
  EXPECT_EQ(json.at("cpu").at("current_bytes").get<std::int64_t>(), snapshot.cpu.current_bytes);
  EXPECT_EQ(json.at("cpu").at("peak_bytes").get<std::int64_t>(), snapshot.cpu.peak_bytes);
  EXPECT_EQ(json.at("cpu").at("allocations").get<std::int64_t>(), snapshot.cpu.allocations);
  EXPECT_EQ(json.at("cpu").at("refusals").get<std::int64_t>(), snapshot.cpu.refusals);
  EXPECT_EQ(json.at("cuda").at("available").get<bool>(), false);
  for (const char* key :
       {"allocated_bytes", "peak_allocated_bytes", "reserved_bytes", "peak_reserved_bytes",
        "active_bytes", "inactive_split_bytes", "oom_count"}) {
    EXPECT_EQ(json.at("cuda").at(key).get<std::int64_t>(), 0) << key;
  }
  EXPECT_EQ(json.at("rss_bytes").get<std::int64_t>(), snapshot.rss_bytes);
  EXPECT_EQ(json.at("peak_rss_bytes").get<std::int64_t>(), snapshot.peak_rss_bytes);
}

}  // namespace
}  // namespace headroom::memory
