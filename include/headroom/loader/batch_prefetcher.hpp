// Collates graph batches on a background thread ahead of the training loop, through a bounded
// queue (ordered_prefetcher.hpp), so a training step does not wait for collation. Records how
// long the consumer did wait.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "headroom/loader/collate.hpp"
#include "headroom/loader/ordered_prefetcher.hpp"

namespace headroom::loader {

// One consumer thread calls next(); the prefetcher owns one producer thread. The store must
// outlive the prefetcher. Destruction stops the producer (it may be mid-batch) and joins it.
class BatchPrefetcher {
 public:
  // Produces one batch per entry of `batches`, in order; at most `depth` (>= 1) wait in the queue.
  BatchPrefetcher(const store::GraphStore& store, std::vector<std::vector<std::uint32_t>> batches,
                  CollateOptions options = {}, std::size_t depth = 4)
      : queue_(
            std::move(batches),
            [&store, options](std::span<const std::uint32_t> ids) {
              return collate(store, ids, options);
            },
            depth, "graph", "collating") {}

  // The next batch, or nullopt after the last. Rethrows an exception raised by collation; out of
  // memory while collating is retried once, after the queue has drained, before it is raised.
  std::optional<GraphBatch> next() { return queue_.next(); }

  std::size_t size() const { return queue_.size(); }
  // Seconds next() spent blocked waiting for the producer, summed over calls.
  double wait_seconds() const { return queue_.wait_seconds(); }

 private:
  OrderedPrefetcher<GraphBatch> queue_;
};

}  // namespace headroom::loader
