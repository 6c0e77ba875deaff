#include "headroom/preprocess/file_graph_stream.hpp"

#include <algorithm>
#include <atomic>

#include "headroom/can/input_error.hpp"
#include "headroom/graph/window_graph_builder.hpp"

namespace headroom::preprocess {
namespace {

constexpr std::size_t kReadBatchFrames = 16 << 10;

}  // namespace

FileGraphResult build_file_graphs(const dataset::DatasetFile& file,
                                  const can::ReaderOptions& reader_options,
                                  const graph::WindowConfig& window,
                                  const graph::CanIdVocabulary* vocabulary,
                                  store::GraphSegmentWriter& segment,
                                  const ProgressCallback& progress, const std::atomic<bool>* stop) {
  auto reader = can::open_frame_reader(file.path, reader_options);
  graph::WindowGraphBuilder builder(window);
  graph::WindowGraph graph;
  FileGraphResult result;

  // `pending` holds the frames from the start of the next window on. A window is cut as soon as
  // its W frames are buffered; then the first S frames are dropped (or, when S > W, the buffer is
  // emptied and the next S - W frames are skipped).
  std::vector<can::CanFrame> pending;
  std::vector<std::uint32_t> keys;
  std::vector<std::uint32_t> seen_ids;
  pending.reserve(window.window);
  std::vector<can::CanFrame> batch(kReadBatchFrames);
  std::uint32_t window_index = 0;
  std::uint64_t skip = 0;
  std::size_t dedupe_at = 1U << 16;

  auto emit = [&](std::size_t length) {
    keys.resize(length);
    for (std::size_t i = 0; i < length; ++i) {
      keys[i] = vocabulary == nullptr ? pending[i].id : vocabulary->index_of(pending[i].id);
    }
    builder.build(std::span(pending.data(), length), keys, graph);
    segment.append(graph, window_index++);
    ++result.graphs;
  };

  for (;;) {
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) return result;
    const std::size_t n = reader->read(batch);
    if (n == 0) break;
    result.rows += n;
    for (std::size_t i = 0; i < n; ++i) {
      const can::CanFrame& frame = batch[i];
      result.attack_rows += frame.label != 0;
      if (vocabulary == nullptr) seen_ids.push_back(frame.id);
      if (skip > 0) {
        --skip;
        continue;
      }
      pending.push_back(frame);
      if (pending.size() == window.window) {
        emit(window.window);
        if (window.stride >= window.window) {
          pending.clear();
          skip = window.stride - window.window;
        } else {
          pending.erase(pending.begin(), pending.begin() + window.stride);
        }
      }
    }
    if (vocabulary == nullptr && seen_ids.size() > dedupe_at) {
      std::sort(seen_ids.begin(), seen_ids.end());
      seen_ids.erase(std::unique(seen_ids.begin(), seen_ids.end()), seen_ids.end());
      dedupe_at = 2 * seen_ids.size() + (1U << 16);  // keeps the sorting cost linear overall
    }
    if (progress) progress(0, n);
  }

  if (result.rows == 0) {
    throw can::InputError(file.path, 0, "", "no CAN frames in the file");
  }
  // A file shorter than one window still gives one graph of all its frames, as upstream.
  if (result.graphs == 0) emit(pending.size());

  result.skipped_rows = reader->skipped_rows();
  if (vocabulary == nullptr) {
    std::sort(seen_ids.begin(), seen_ids.end());
    seen_ids.erase(std::unique(seen_ids.begin(), seen_ids.end()), seen_ids.end());
    result.can_ids = std::move(seen_ids);
  }
  if (progress) progress(file.size_bytes, 0);
  return result;
}

}  // namespace headroom::preprocess
