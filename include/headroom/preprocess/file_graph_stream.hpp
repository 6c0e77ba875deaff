// Turns one CAN log into its window graphs, streaming: frames are read in bounded batches, cut
// into chunks of whole windows, and each chunk's graphs are built (on helper threads when given)
// and written to the segment in file order.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "headroom/can/log_format.hpp"
#include "headroom/dataset/dataset_layout.hpp"
#include "headroom/graph/can_id_vocabulary.hpp"
#include "headroom/graph/window_config.hpp"
#include "headroom/graph/window_graph_builder.hpp"
#include "headroom/store/graph_segment_writer.hpp"

namespace headroom::preprocess {

struct FileGraphResult {
  std::uint64_t rows = 0;
  std::uint64_t attack_rows = 0;
  std::uint64_t skipped_rows = 0;
  std::uint64_t graphs = 0;
  // Sorted unique CAN IDs seen (filled when keyed by raw CAN ID, i.e. without a vocabulary): of
  // every frame, or of the frames labelled normal only (FileGraphOptions::normal_frame_ids).
  std::vector<std::uint32_t> can_ids;
  // XXH3-64 of the frames read (timestamp, ID, DLC, label, payload, in order): equal for two
  // files holding the same traffic whatever their format or metadata.
  std::uint64_t frames_hash = 0;
  // Windows whose frames are mostly (more than half) IDs outside `vocabulary` (0 without one).
  std::uint64_t mostly_unknown_graphs = 0;
};

// Called with (input bytes, rows) progress increments; may be empty.
using ProgressCallback = std::function<void(std::uint64_t bytes, std::uint64_t rows)>;

class WindowFrameWriter;

// What build_file_graphs does besides building a file's graphs.
struct FileGraphOptions {
  // > 0: build chunks of windows on this many helper threads, in parallel with reading (the result
  // is identical); memory stays bounded by a few chunks per helper.
  unsigned helper_threads = 0;
  // Collect the IDs of normal frames only (PreprocessOptions::vocabulary_from == "normal").
  bool normal_frame_ids = false;
  // When set, every frame read is appended to it, in file order (a store part's test files).
  WindowFrameWriter* record_frames = nullptr;
  // The node features and identity of every graph.
  graph::NodeFeatureOptions features;
  // Key nodes by raw CAN ID even when a vocabulary is given (it then only counts the windows of
  // mostly unknown IDs): an identity other than the CAN ID must not merge unknown IDs into one
  // node.
  bool raw_keys = false;
};

// Reads `file` and appends its graphs to `segment`. With `vocabulary` null, node keys are the raw
// CAN IDs (training files, read before the vocabulary exists) and the IDs seen are collected;
// otherwise keys are vocabulary indices. Throws util::InputError on bad input (naming file, line,
// column), including a file with no frames. `stop` is polled between batches to abandon work
// early when another file has failed.
FileGraphResult build_file_graphs(
    const dataset::DatasetFile& file, const can::ReaderOptions& reader_options,
    const graph::WindowConfig& window, const graph::CanIdVocabulary* vocabulary,
    store::GraphSegmentWriter& segment, const ProgressCallback& progress,
    const std::atomic<bool>* stop = nullptr, const FileGraphOptions& file_options = {});

// Whether more than half of `frames` have IDs outside `vocabulary`.
bool mostly_unknown_ids(std::span<const can::CanFrame> frames,
                        const graph::CanIdVocabulary& vocabulary);

// The graph of one window of frames, keyed by `vocabulary` (raw CAN IDs when null or `raw_keys`),
// as build_file_graphs builds each window; `keys` is scratch. Returns whether most (more than half)
// of the window's frames have IDs outside the vocabulary (false without one).
bool build_window_graph(graph::WindowGraphBuilder& builder, std::span<const can::CanFrame> frames,
                        const graph::CanIdVocabulary* vocabulary, std::vector<std::uint32_t>& keys,
                        graph::WindowGraph& out, bool raw_keys = false);

}  // namespace headroom::preprocess
