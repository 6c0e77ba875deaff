#include "headroom/loader/batch_prefetcher.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <chrono>
#include <stdexcept>
#include <utility>

#include "headroom/util/allocation_site.hpp"

namespace headroom::loader {

BatchPrefetcher::BatchPrefetcher(const store::GraphStore& store,
                                 std::vector<std::vector<std::uint32_t>> batches,
                                 CollateOptions options, std::size_t depth)
    : store_(store), batches_(std::move(batches)), options_(options), depth_(depth) {
  if (depth_ == 0) throw std::invalid_argument("BatchPrefetcher: depth must be at least 1");
  // Started last: the thread reads every other member.
  producer_ = std::thread([this] { produce(); });
}

BatchPrefetcher::~BatchPrefetcher() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  producer_.join();
}

void BatchPrefetcher::produce() {
  for (std::size_t i = 0; i < batches_.size(); ++i) {
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return stop_ || ready_.size() < depth_; });
      if (stop_) return;
    }
    // Collation runs unlocked so the consumer can take ready batches meanwhile.
    try {
      GraphBatch batch = collate_retrying_once(i);
      {
        std::lock_guard lock(mutex_);
        ready_.push_back(std::move(batch));
      }
      changed_.notify_all();
    } catch (...) {
      {
        std::lock_guard lock(mutex_);
        error_ = std::current_exception();
      }
      changed_.notify_all();
      return;
    }
  }
}

// Collation allocates outside the training step's OOM guard: out of memory here is retried once
// the consumer has taken every queued batch (what they held is then the training step's), and a
// second failure is an error that names the batch.
GraphBatch BatchPrefetcher::collate_retrying_once(std::size_t index) {
  const util::AllocationSite site("collate");
  try {
    return collate(store_, batches_[index], options_);
  } catch (const c10::OutOfMemoryError&) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return stop_ || ready_.empty(); });
  }
  try {
    return collate(store_, batches_[index], options_);
  } catch (const c10::OutOfMemoryError& error) {
    const auto& ids = batches_[index];
    throw std::runtime_error(fmt::format(
        "out of memory collating batch {} of {} ({} graphs starting with graph {}) on the host, "
        "twice (the second time with no other batch queued): {}",
        index + 1, batches_.size(), ids.size(), ids.empty() ? -1 : std::int64_t{ids.front()},
        error.what_without_backtrace()));
  }
}

std::optional<GraphBatch> BatchPrefetcher::next() {
  std::unique_lock lock(mutex_);
  if (consumed_ == batches_.size()) return std::nullopt;
  if (ready_.empty() && !error_) {
    const auto start = std::chrono::steady_clock::now();
    changed_.wait(lock, [this] { return !ready_.empty() || error_ != nullptr; });
    wait_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  // Batches collated before a failure are still delivered, in order; the error comes in place of
  // the batch that failed (and of every later call).
  if (ready_.empty()) std::rethrow_exception(error_);
  GraphBatch batch = std::move(ready_.front());
  ready_.pop_front();
  ++consumed_;
  lock.unlock();
  changed_.notify_all();
  return batch;
}

}  // namespace headroom::loader
