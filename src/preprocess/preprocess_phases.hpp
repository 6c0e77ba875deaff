// The steps that a single-process preprocess and the assembly of a sharded one share: so that the
// two build the same store by construction, not by keeping two copies in step. Internal to the
// preprocess area.
#pragma once

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "headroom/dataset/dataset_layout.hpp"
#include "headroom/graph/can_id_vocabulary.hpp"
#include "headroom/preprocess/file_graph_stream.hpp"
#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/store/graph_segment_writer.hpp"
#include "headroom/store/store_builder.hpp"

namespace headroom::preprocess::detail {

// Throws std::invalid_argument for options no build accepts (window, vocabulary source, mapping).
void check_options(const PreprocessOptions& options);

// The worker threads a build uses (options.threads, or every hardware thread for 0).
unsigned worker_threads(const PreprocessOptions& options);

// Threads left over when `files` files are read on `threads` threads at once: each file's windows
// are built on this many helpers, in parallel with its reading.
unsigned helper_threads_for(std::size_t files, unsigned threads);

// Runs task(i) for i in [0, count) on `threads` threads. The first exception stops the others
// (they poll `stop`) and is rethrown here.
template <typename Task>
void parallel_for(std::size_t count, unsigned threads, std::atomic<bool>& stop, Task task) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    for (;;) {
      if (stop.load()) return;
      const std::size_t i = next.fetch_add(1);
      if (i >= count) return;
      try {
        task(i);
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        stop.store(true);
        return;
      }
    }
  };
  const unsigned n = std::max(1U, std::min<unsigned>(threads, static_cast<unsigned>(count)));
  std::vector<std::jthread> pool;
  for (unsigned t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  pool.clear();  // joins
  if (failure) std::rethrow_exception(failure);
}

// What was read of every file of a layout (index = layout file index).
struct FileOutcomes {
  std::vector<FileGraphResult> results;
  std::vector<store::SegmentSummary> segments;
};

// Files left out as copies of earlier ones, and every copy found.
struct DuplicateScreen {
  std::vector<bool> left_out;  // per layout file
  std::vector<DuplicateFile> duplicates;
};

// Files [begin, end) whose frames repeat a file read before them (training files, then test
// files, in layout order), by frame hash and row count. With `leave_out`, those copies are marked
// left out; test files are only ever reported.
void screen_duplicates(const dataset::DatasetLayout& layout,
                       const std::vector<FileGraphResult>& results, std::size_t begin,
                       std::size_t end, bool leave_out, DuplicateScreen& screen);

// The vocabulary of the training files not left out (their collected CAN IDs).
graph::CanIdVocabulary training_vocabulary(const dataset::DatasetLayout& layout,
                                           const std::vector<FileGraphResult>& results,
                                           const DuplicateScreen& screen);

// Describes the files in the store's metadata, drops the left-out ones' segments (those the
// builder owns) and commits the store. Returns the report (seconds not filled in).
PreprocessReport commit_store(store::StoreBuilder& builder, const dataset::DatasetLayout& layout,
                              const PreprocessOptions& options, const FileOutcomes& outcomes,
                              DuplicateScreen screen, const graph::CanIdVocabulary& vocabulary);

}  // namespace headroom::preprocess::detail
