#include "headroom/nn/intra_op_parallelism.hpp"

#include <ATen/Parallel.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>

namespace headroom::nn {

int intra_op_threads_reached() {
  const auto threads = static_cast<std::int64_t>(at::get_num_threads());
  std::mutex mutex;
  std::set<std::thread::id> seen;
  at::parallel_for(0, threads, 1, [&](std::int64_t begin, std::int64_t end) {
    // Long enough that one thread cannot take every item before the others start.
    std::this_thread::sleep_for(std::chrono::milliseconds(20 * (end - begin)));
    const std::lock_guard lock(mutex);
    seen.insert(std::this_thread::get_id());
  });
  return static_cast<int>(seen.size());
}

}  // namespace headroom::nn
