// Collates batches on a background thread ahead of the training loop, through a bounded queue, so
// a training step does not wait for collation. Records how long the consumer did wait.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "headroom/loader/collate.hpp"

namespace headroom::loader {

// One consumer thread calls next(); the prefetcher owns one producer thread. The store must
// outlive the prefetcher. Destruction stops the producer (it may be mid-batch) and joins it.
class BatchPrefetcher {
 public:
  // Produces one batch per entry of `batches`, in order; at most `depth` (>= 1) wait in the queue.
  BatchPrefetcher(const store::GraphStore& store, std::vector<std::vector<std::uint32_t>> batches,
                  CollateOptions options = {}, std::size_t depth = 4);
  ~BatchPrefetcher();
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  // The next batch, or nullopt after the last. Rethrows an exception raised by collation; out of
  // memory while collating is retried once, after the queue has drained, before it is raised.
  std::optional<GraphBatch> next();

  std::size_t size() const { return batches_.size(); }
  // Seconds next() spent blocked waiting for the producer, summed over calls.
  double wait_seconds() const { return wait_seconds_; }

 private:
  void produce();
  GraphBatch collate_retrying_once(std::size_t index);

  const store::GraphStore& store_;
  std::vector<std::vector<std::uint32_t>> batches_;
  CollateOptions options_;
  std::size_t depth_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<GraphBatch> ready_;
  std::size_t consumed_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  double wait_seconds_ = 0.0;
  std::thread producer_;
};

}  // namespace headroom::loader
