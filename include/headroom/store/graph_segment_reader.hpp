// Reads back, graph by graph, a segment that GraphSegmentWriter wrote: what the assembly of a
// sharded store uses to re-key a part's test files once the vocabulary is known.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "headroom/graph/window_graph.hpp"
#include "headroom/store/graph_segment_writer.hpp"

namespace headroom::store {

// Throws StoreError naming the first file of `segment` whose size is not what its graph, node and
// edge counts give (a truncated or foreign segment), or that is missing.
void require_complete_segment(const SegmentSummary& segment);

// Reads the graphs in the order they were appended, through bounded buffers (never a whole file).
// Not thread-safe: one reader per segment and thread.
class GraphSegmentReader {
 public:
  // Opens the segment's files. Throws std::system_error naming a file that cannot be opened.
  explicit GraphSegmentReader(const SegmentSummary& segment);
  ~GraphSegmentReader();
  GraphSegmentReader(const GraphSegmentReader&) = delete;
  GraphSegmentReader& operator=(const GraphSegmentReader&) = delete;

  // Reads the next graph into `graph` (node keys as written: raw CAN IDs or vocabulary indices,
  // per the segment's keys) and its window number into `window_index`. Returns false after the
  // last graph. Throws StoreError when a file ends early.
  bool next(graph::WindowGraph& graph, std::uint32_t& window_index);

 private:
  struct Files;
  SegmentSummary segment_;
  std::uint64_t read_ = 0;  // graphs read so far
  std::unique_ptr<Files> files_;
};

}  // namespace headroom::store
