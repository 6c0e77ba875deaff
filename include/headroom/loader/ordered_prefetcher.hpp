// Builds batches on a background thread ahead of their consumer, in order, through a bounded
// queue, so that a training step does not wait for them; records how long the consumer did wait.
// What a batch is, and how it is built from its ids, is the caller's (collated graphs:
// batch_prefetcher.hpp; a task's batches: the training loop).
#pragma once

#include <c10/util/Exception.h>

#include <fmt/format.h>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "headroom/util/allocation_site.hpp"

namespace headroom::loader {

// One consumer thread calls next(); the prefetcher owns one producer thread, which calls `build`.
// Destruction stops the producer (it may be mid-batch) and joins it.
template <typename Batch>
class OrderedPrefetcher {
 public:
  using Build = std::function<Batch(std::span<const std::uint32_t> ids)>;

  // Produces build(ids) for each entry of `batches`, in order; at most `depth` (>= 1) wait in
  // the queue. `unit` names what an id is in errors ("graph"), `action` what building is
  // ("collating").
  OrderedPrefetcher(std::vector<std::vector<std::uint32_t>> batches, Build build, std::size_t depth,
                    std::string unit, std::string action)
      : batches_(std::move(batches)),
        build_(std::move(build)),
        depth_(depth),
        unit_(std::move(unit)),
        action_(std::move(action)) {
    if (depth_ == 0) throw std::invalid_argument("batch prefetcher: depth must be at least 1");
    // Started last: the thread reads every other member.
    producer_ = std::thread([this] { produce(); });
  }
  ~OrderedPrefetcher() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    producer_.join();
  }
  OrderedPrefetcher(const OrderedPrefetcher&) = delete;
  OrderedPrefetcher& operator=(const OrderedPrefetcher&) = delete;

  // The next batch, or nullopt after the last. Rethrows an exception raised by `build`; out of
  // memory while building is retried once, after the queue has drained, before it is raised.
  std::optional<Batch> next() {
    std::unique_lock lock(mutex_);
    if (consumed_ == batches_.size()) return std::nullopt;
    if (ready_.empty() && !error_) {
      const auto start = std::chrono::steady_clock::now();
      changed_.wait(lock, [this] { return !ready_.empty() || error_ != nullptr; });
      wait_seconds_ +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    // Batches built before a failure are still delivered, in order; the error comes in place of
    // the batch that failed (and of every later call).
    if (ready_.empty()) std::rethrow_exception(error_);
    Batch batch = std::move(ready_.front());
    ready_.pop_front();
    ++consumed_;
    lock.unlock();
    changed_.notify_all();
    return batch;
  }

  std::size_t size() const { return batches_.size(); }
  // Seconds next() spent blocked waiting for the producer, summed over calls.
  double wait_seconds() const { return wait_seconds_; }

 private:
  void produce() {
    for (std::size_t i = 0; i < batches_.size(); ++i) {
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [this] { return stop_ || ready_.size() < depth_; });
        if (stop_) return;
      }
      // Building runs unlocked so the consumer can take ready batches meanwhile.
      try {
        Batch batch = build_retrying_once(i);
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

  // Building allocates outside the training step's OOM guard: out of memory here is retried once
  // the consumer has taken every queued batch (what they held is then the training step's), and
  // a second failure is an error that names the batch.
  Batch build_retrying_once(std::size_t index) {
    const util::AllocationSite site("collate");
    try {
      return build_(batches_[index]);
    } catch (const c10::OutOfMemoryError&) {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return stop_ || ready_.empty(); });
    }
    try {
      return build_(batches_[index]);
    } catch (const c10::OutOfMemoryError& error) {
      const auto& ids = batches_[index];
      throw std::runtime_error(fmt::format(
          "out of memory {} batch {} of {} ({} {}s starting with {} {}) on the host, twice (the "
          "second time with no other batch queued): {}",
          action_, index + 1, batches_.size(), ids.size(), unit_, unit_,
          ids.empty() ? -1 : std::int64_t{ids.front()}, error.what_without_backtrace()));
    }
  }

  std::vector<std::vector<std::uint32_t>> batches_;
  Build build_;
  std::size_t depth_;
  std::string unit_;
  std::string action_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Batch> ready_;
  std::size_t consumed_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  double wait_seconds_ = 0.0;
  std::thread producer_;
};

}  // namespace headroom::loader
