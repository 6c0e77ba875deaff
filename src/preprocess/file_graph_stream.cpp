#include "headroom/preprocess/file_graph_stream.hpp"

#include <algorithm>
#include <atomic>
#include <deque>
#include <future>
#include <span>

#include "headroom/graph/window_graph_builder.hpp"
#include "headroom/preprocess/window_frames.hpp"
#include "headroom/util/content_hash.hpp"
#include "headroom/util/input_error.hpp"

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

// What a file's frames say besides their windows: rows, attack rows, the frames' hash and, when
// keyed by raw CAN ID, the IDs seen.
class FrameTally {
 public:
  FrameTally(bool collect_ids, bool normal_frame_ids)
      : collect_ids_(collect_ids), normal_frame_ids_(normal_frame_ids) {}

  void add(std::span<const can::CanFrame> frames, FileGraphResult& result) {
    result.rows += frames.size();
    for (const can::CanFrame& frame : frames) {
      result.attack_rows += frame.label != 0;
      if (collect_ids_ && (!normal_frame_ids_ || frame.label == 0)) seen_ids_.push_back(frame.id);
      hash_frame(frames_hash_, frame);
    }
    if (collect_ids_ && seen_ids_.size() > dedupe_at_) {
      sort_unique(seen_ids_);
      dedupe_at_ = 2 * seen_ids_.size() + (1U << 16);  // keeps the sorting cost linear overall
    }
  }

  // Moves the hash and (when collected) the sorted unique IDs into `result`.
  void finish(FileGraphResult& result) {
    result.frames_hash = frames_hash_.digest();
    if (collect_ids_) {
      sort_unique(seen_ids_);
      result.can_ids = std::move(seen_ids_);
    }
  }

 private:
  bool collect_ids_;
  bool normal_frame_ids_;
  std::vector<std::uint32_t> seen_ids_;
  std::size_t dedupe_at_ = 1U << 16;
  util::ContentHash frames_hash_;
};

// Cuts a file's frames, as they arrive in batches, into chunks of kWindowsPerChunk windows. It
// holds the frames from the start of the next window on: once a chunk is cut, the frames before
// the next chunk's first window are dropped (or, when S > W, skipped as they arrive).
class ChunkCutter {
 public:
  explicit ChunkCutter(const graph::WindowConfig& window)
      : window_(window),
        chunk_span_((kWindowsPerChunk - 1) * window.stride + window.window),
        chunk_advance_(kWindowsPerChunk * window.stride) {}

  void add(std::span<const can::CanFrame> frames) {
    std::size_t first_kept = 0;
    if (skip_ > 0) {
      first_kept = static_cast<std::size_t>(std::min<std::uint64_t>(skip_, frames.size()));
      skip_ -= first_kept;
    }
    pending_.insert(pending_.end(), frames.begin() + static_cast<std::ptrdiff_t>(first_kept),
                    frames.end());
  }

  bool chunk_ready() const { return skip_ == 0 && pending_.size() >= chunk_span_; }

  // The next full chunk; only when chunk_ready().
  FrameChunk cut_chunk() {
    FrameChunk chunk;
    chunk.windows = kWindowsPerChunk;
    chunk.frames.assign(pending_.begin(),
                        pending_.begin() + static_cast<std::ptrdiff_t>(chunk_span_));
    if (chunk_advance_ >= pending_.size()) {
      skip_ = chunk_advance_ - pending_.size();
      pending_.clear();
    } else {
      pending_.erase(pending_.begin(),
                     pending_.begin() + static_cast<std::ptrdiff_t>(chunk_advance_));
    }
    return chunk;
  }

  // Once the file has ended: whether whole windows are left, and the chunk of them.
  bool windows_left() const { return skip_ == 0 && pending_.size() >= window_.window; }
  FrameChunk cut_last_chunk() {
    FrameChunk chunk;
    chunk.windows = (pending_.size() - window_.window) / window_.stride + 1;
    chunk.frames = std::move(pending_);
    return chunk;
  }

  // Every frame left as one short window (for a file shorter than one window).
  FrameChunk cut_short_window() {
    FrameChunk chunk;
    chunk.short_window = pending_.size();
    chunk.frames = std::move(pending_);
    return chunk;
  }

 private:
  const graph::WindowConfig& window_;
  const std::size_t chunk_span_;     // frames of a chunk's windows
  const std::size_t chunk_advance_;  // frames from one chunk's first window to the next one's
  std::vector<can::CanFrame> pending_;
  std::uint64_t skip_ = 0;
};

// Builds chunks' graphs, on helper threads when there are any, and appends them to the segment
// strictly in the order the chunks came, so the store is the same whatever the thread count.
class ChunkPipeline {
 public:
  ChunkPipeline(const graph::WindowConfig& window, const graph::CanIdVocabulary* vocabulary,
                const FileGraphOptions& options, store::GraphSegmentWriter& segment,
                FileGraphResult& result)
      : window_(window),
        vocabulary_(vocabulary),
        options_(options),
        segment_(segment),
        result_(result) {}

  void submit(FrameChunk chunk) {
    const unsigned helper_threads = options_.helper_threads;
    if (helper_threads == 0) {
      write(build_chunk(chunk, window_, vocabulary_, options_));
      return;
    }
    if (in_flight_.size() >= 2 * helper_threads) {
      write(in_flight_.front().get());
      in_flight_.pop_front();
    }
    in_flight_.push_back(std::async(
        std::launch::async,
        [chunk = std::move(chunk), &window = window_, vocabulary = vocabulary_,
         &options = options_] { return build_chunk(chunk, window, vocabulary, options); }));
  }

  // Writes every chunk still being built.
  void drain() {
    while (!in_flight_.empty()) {
      write(in_flight_.front().get());
      in_flight_.pop_front();
    }
  }

  // On an error: lets the helpers finish before what they reference goes away.
  void wait_for_helpers() {
    for (auto& f : in_flight_) {
      if (f.valid()) f.wait();
    }
  }

  bool idle() const { return in_flight_.empty(); }

 private:
  void write(const GraphChunk& chunk) {
    result_.mostly_unknown_graphs += chunk.mostly_unknown;
    for (const auto& graph : chunk.graphs) {
      segment_.append(graph, window_index_++);
      ++result_.graphs;
    }
  }

  const graph::WindowConfig& window_;
  const graph::CanIdVocabulary* vocabulary_;
  const FileGraphOptions& options_;
  store::GraphSegmentWriter& segment_;
  FileGraphResult& result_;
  std::deque<std::future<GraphChunk>> in_flight_;  // oldest first
  std::uint32_t window_index_ = 0;
};

// Once the file has ended: the windows that fit in what is left, or, for a file shorter than one
// window, one graph of all its frames (as upstream).
void submit_last_chunk(ChunkCutter& cutter, ChunkPipeline& pipeline, const FileGraphResult& result,
                       const graph::WindowConfig& window) {
  if (cutter.windows_left()) {
    pipeline.submit(cutter.cut_last_chunk());
  } else if (result.graphs == 0 && pipeline.idle() && result.rows < window.window) {
    pipeline.submit(cutter.cut_short_window());
  }
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
  auto reader = can::open_frame_reader(file.path, reader_options);
  FileGraphResult result;
  FrameTally tally(vocabulary == nullptr, file_options.normal_frame_ids);
  ChunkCutter cutter(window);
  ChunkPipeline pipeline(window, vocabulary, file_options, segment, result);
  std::vector<can::CanFrame> batch(kReadBatchFrames);
  try {
    for (;;) {
      if (stop != nullptr && stop->load(std::memory_order_relaxed)) {
        pipeline.drain();
        return result;
      }
      const std::size_t n = reader->read(batch);
      if (n == 0) break;
      const std::span<const can::CanFrame> frames(batch.data(), n);
      if (file_options.record_frames != nullptr) file_options.record_frames->append(frames);
      tally.add(frames, result);
      cutter.add(frames);
      while (cutter.chunk_ready()) pipeline.submit(cutter.cut_chunk());
      if (progress) progress(0, n);
    }
    if (result.rows == 0) throw util::InputError(file.path, 0, "", "no CAN frames in the file");
    submit_last_chunk(cutter, pipeline, result, window);
    pipeline.drain();
  } catch (...) {
    pipeline.wait_for_helpers();
    throw;
  }

  result.skipped_rows = reader->skipped_rows();
  tally.finish(result);
  if (progress) progress(file.size_bytes, 0);
  return result;
}

}  // namespace headroom::preprocess
