// Streams the graphs of one source file into a segment: a set of files in the store's temporary
// directory, later concatenated into the store's arrays by StoreBuilder::commit.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "headroom/graph/window_graph.hpp"
#include "headroom/util/file_writer.hpp"

namespace headroom::store {

// What the node keys of a segment mean. Training files are read before the vocabulary exists, so
// their keys are raw CAN IDs and are mapped to vocabulary indices when the store is assembled.
enum class SegmentKeys { kRawCanIds, kVocabularyIndices };

struct SegmentSummary {
  std::filesystem::path prefix;  // segment files are prefix + ".<array>"
  SegmentKeys keys = SegmentKeys::kRawCanIds;
  std::uint64_t graphs = 0;
  std::uint64_t nodes = 0;
  std::uint64_t edges = 0;
};

// Not thread-safe: one writer per file, used by the thread processing that file.
class GraphSegmentWriter {
 public:
  GraphSegmentWriter(std::filesystem::path prefix, SegmentKeys keys);

  void append(const graph::WindowGraph& graph, std::uint32_t window_index);
  // Flushes and fsyncs the segment files.
  SegmentSummary finish();

 private:
  SegmentSummary summary_;
  util::ChecksummedFileWriter node_keys_;
  util::ChecksummedFileWriter node_features_;
  util::ChecksummedFileWriter edge_index_;
  util::ChecksummedFileWriter edge_features_;
  util::ChecksummedFileWriter graph_records_;  // per graph: nodes, edges, window, label (u32 x 4)
};

}  // namespace headroom::store
