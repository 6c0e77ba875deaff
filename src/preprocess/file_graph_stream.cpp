#include "headroom/preprocess/file_graph_stream.hpp"

#include <algorithm>
#include <atomic>
#include <deque>
#include <future>
#include <span>

#include "headroom/can/input_error.hpp"
#include "headroom/graph/window_graph_builder.hpp"
#include "headroom/preprocess/window_frames.hpp"
#include "headroom/util/content_hash.hpp"

namespace headroom::preprocess {
namespace {

void sort_unique(std::vector<std::uint32_t>& ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

constexpr std::size_t kReadBatchFrames = 16 << 10;
// Windows per chunk: large enough that handing a chunk to a thread costs little next to building
// it (~1 ms of work at W = 100), small enough that a few chunks in flight cost little memory.
constexpr std::size_t kWindowsPerChunk = 128;

// Feeds a frame's fields (not its padding) into the file's frame hash.
void hash_frame(util::ContentHash& hash, const can::CanFrame& frame) {
  const auto feed = [&hash](const auto& value) {
    hash.update(std::as_bytes(std::span(&value, 1)));
  };
  feed(frame.timestamp_s);
  feed(frame.id);
  feed(frame.dlc);
  feed(frame.label);
  hash.update(std::as_bytes(std::span(frame.data)));
}

// Consecutive windows of one file with the frames they cover (window k starts at frame k * S).
struct FrameChunk {
  std::vector<can::CanFrame> frames;
  std::size_t windows = 0;
  std::size_t short_window = 0;  // > 0: one window of this many frames (a file shorter than W)
};

struct GraphChunk {
  std::vector<graph::WindowGraph> graphs;
  std::uint64_t mostly_unknown = 0;  // windows whose frames are mostly out-of-vocabulary IDs
};

GraphChunk build_chunk(const FrameChunk& chunk, const graph::WindowConfig& window,
                       const graph::CanIdVocabulary* vocabulary,
                       const FileGraphOptions& file_options) {
  graph::WindowGraphBuilder builder(window, file_options.features);
  std::vector<std::uint32_t> keys;
  GraphChunk out;
  const std::size_t count = chunk.short_window > 0 ? 1 : chunk.windows;
  const std::size_t length = chunk.short_window > 0 ? chunk.short_window : window.window;
  out.graphs.resize(count);
  for (std::size_t w = 0; w < count; ++w) {
    const std::span<const can::CanFrame> frames(chunk.frames.data() + w * window.stride, length);
    out.mostly_unknown +=
        build_window_graph(builder, frames, vocabulary, keys, out.graphs[w], file_options.raw_keys);
  }
  return out;
}

}  // namespace

bool mostly_unknown_ids(std::span<const can::CanFrame> frames,
                        const graph::CanIdVocabulary& vocabulary) {
  std::size_t unknown = 0;
  for (const auto& frame : frames)
    unknown += vocabulary.index_of(frame.id) == vocabulary.out_of_vocabulary_index();
  return 2 * unknown > frames.size();
}

bool build_window_graph(graph::WindowGraphBuilder& builder, std::span<const can::CanFrame> frames,
                        const graph::CanIdVocabulary* vocabulary, std::vector<std::uint32_t>& keys,
                        graph::WindowGraph& out, bool raw_keys) {
  keys.resize(frames.size());
  std::size_t unknown = 0;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const std::uint32_t index = vocabulary == nullptr ? 0 : vocabulary->index_of(frames[i].id);
    keys[i] = vocabulary == nullptr || raw_keys ? frames[i].id : index;
    unknown += vocabulary != nullptr && index == vocabulary->out_of_vocabulary_index();
  }
  builder.build(frames, keys, out);
  return 2 * unknown > frames.size();
}

FileGraphResult build_file_graphs(const dataset::DatasetFile& file,
                                  const can::ReaderOptions& reader_options,
                                  const graph::WindowConfig& window,
                                  const graph::CanIdVocabulary* vocabulary,
                                  store::GraphSegmentWriter& segment,
                                  const ProgressCallback& progress, const std::atomic<bool>* stop,
                                  const FileGraphOptions& file_options) {
  const unsigned helper_threads = file_options.helper_threads;
  const bool normal_frame_ids = file_options.normal_frame_ids;
  auto reader = can::open_frame_reader(file.path, reader_options);
  FileGraphResult result;

  // `pending` holds the frames from the start of the next window on. A chunk of windows is cut
  // as soon as its frames are buffered; then the frames before the next chunk's first window are
  // dropped (or, when S > W, skipped as they arrive).
  const std::size_t chunk_span = (kWindowsPerChunk - 1) * window.stride + window.window;
  const std::size_t chunk_advance = kWindowsPerChunk * window.stride;
  std::vector<can::CanFrame> pending;
  std::vector<can::CanFrame> batch(kReadBatchFrames);
  std::vector<std::uint32_t> seen_ids;
  util::ContentHash frames_hash;
  std::size_t dedupe_at = 1U << 16;
  std::uint64_t skip = 0;
  std::uint32_t window_index = 0;

  // Chunks being built, oldest first; written strictly in this order so the store is the same
  // whatever the thread count.
  std::deque<std::future<GraphChunk>> in_flight;
  auto write_chunk = [&](const GraphChunk& chunk) {
    result.mostly_unknown_graphs += chunk.mostly_unknown;
    for (const auto& graph : chunk.graphs) {
      segment.append(graph, window_index++);
      ++result.graphs;
    }
  };
  auto submit = [&](FrameChunk chunk) {
    if (helper_threads == 0) {
      write_chunk(build_chunk(chunk, window, vocabulary, file_options));
      return;
    }
    if (in_flight.size() >= 2 * helper_threads) {
      write_chunk(in_flight.front().get());
      in_flight.pop_front();
    }
    in_flight.push_back(std::async(std::launch::async,
                                   [chunk = std::move(chunk), &window, vocabulary, &file_options] {
                                     return build_chunk(chunk, window, vocabulary, file_options);
                                   }));
  };
  auto drain = [&] {
    while (!in_flight.empty()) {
      write_chunk(in_flight.front().get());
      in_flight.pop_front();
    }
  };

  try {
    for (;;) {
      if (stop != nullptr && stop->load(std::memory_order_relaxed)) {
        drain();
        return result;
      }
      const std::size_t n = reader->read(batch);
      if (n == 0) break;
      result.rows += n;
      if (file_options.record_frames != nullptr)
        file_options.record_frames->append(std::span(batch.data(), n));
      std::size_t first_kept = 0;
      for (std::size_t i = 0; i < n; ++i) {
        result.attack_rows += batch[i].label != 0;
        if (vocabulary == nullptr && (!normal_frame_ids || batch[i].label == 0))
          seen_ids.push_back(batch[i].id);
        hash_frame(frames_hash, batch[i]);
      }
      if (skip > 0) {
        first_kept = static_cast<std::size_t>(std::min<std::uint64_t>(skip, n));
        skip -= first_kept;
      }
      pending.insert(pending.end(), batch.begin() + static_cast<std::ptrdiff_t>(first_kept),
                     batch.begin() + static_cast<std::ptrdiff_t>(n));
      while (skip == 0 && pending.size() >= chunk_span) {
        FrameChunk chunk;
        chunk.windows = kWindowsPerChunk;
        chunk.frames.assign(pending.begin(),
                            pending.begin() + static_cast<std::ptrdiff_t>(chunk_span));
        submit(std::move(chunk));
        if (chunk_advance >= pending.size()) {
          skip = chunk_advance - pending.size();
          pending.clear();
        } else {
          pending.erase(pending.begin(),
                        pending.begin() + static_cast<std::ptrdiff_t>(chunk_advance));
        }
      }
      if (vocabulary == nullptr && seen_ids.size() > dedupe_at) {
        sort_unique(seen_ids);
        dedupe_at = 2 * seen_ids.size() + (1U << 16);  // keeps the sorting cost linear overall
      }
      if (progress) progress(0, n);
    }

    if (result.rows == 0) throw can::InputError(file.path, 0, "", "no CAN frames in the file");
    // The last, partial chunk: the windows that fit in what is left.
    if (skip == 0 && pending.size() >= window.window) {
      FrameChunk chunk;
      chunk.windows = (pending.size() - window.window) / window.stride + 1;
      chunk.frames = std::move(pending);
      submit(std::move(chunk));
    } else if (result.graphs == 0 && in_flight.empty() && result.rows < window.window) {
      // A file shorter than one window still gives one graph of all its frames, as upstream.
      FrameChunk chunk;
      chunk.short_window = pending.size();
      chunk.frames = std::move(pending);
      submit(std::move(chunk));
    }
    drain();
  } catch (...) {
    // Let helpers finish before the segment and builders they reference go away.
    for (auto& f : in_flight) {
      if (f.valid()) f.wait();
    }
    throw;
  }

  result.skipped_rows = reader->skipped_rows();
  result.frames_hash = frames_hash.digest();
  if (vocabulary == nullptr) {
    sort_unique(seen_ids);
    result.can_ids = std::move(seen_ids);
  }
  if (progress) progress(file.size_bytes, 0);
  return result;
}

}  // namespace headroom::preprocess
