// Streams the graphs of one source file into a segment: a set of files in the store's temporary
// directory (or in a store part, preprocess/store_part.hpp), later concatenated into the store's
// arrays by StoreBuilder::commit.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>

#include "headroom/graph/window_graph.hpp"
#include "headroom/util/file_writer.hpp"

namespace headroom::store {

// What the node keys of a segment mean. Training files are read before the vocabulary exists, so
// their keys are raw CAN IDs and are mapped to vocabulary indices when the store is assembled.
enum class SegmentKeys { kRawCanIds, kVocabularyIndices };

// The files of a segment: prefix + suffix each, in the order the writer lists them.
inline constexpr std::array<const char*, 5> kSegmentFileSuffixes = {
    ".graphs", ".node_keys", ".node_features", ".edge_index", ".edge_features"};
// Bytes per graph of the ".graphs" records (nodes, edges, window, label: u32 each).
inline constexpr std::uint64_t kSegmentGraphRecordBytes = 16;

struct SegmentSummary {
  std::filesystem::path prefix;  // segment files are prefix + ".<array>"
  SegmentKeys keys = SegmentKeys::kRawCanIds;
  std::uint64_t graphs = 0;
  std::uint64_t nodes = 0;
  std::uint64_t edges = 0;
  std::size_t node_feature_count = graph::kNodeFeatureCount;  // per node row
  // XXH3-64 of each file, in kSegmentFileSuffixes order; all 0 unless the writer computed them.
  std::array<std::uint64_t, kSegmentFileSuffixes.size()> checksums{};
};

// Not thread-safe: one writer per file, used by the thread processing that file.
class GraphSegmentWriter {
 public:
  // `checksummed`: hash every file as it is written (a store part's segments, which the assembly
  // verifies); a store's own segments are scratch, read back by the process that wrote them.
  GraphSegmentWriter(std::filesystem::path prefix, SegmentKeys keys, bool checksummed = false);

  void append(const graph::WindowGraph& graph, std::uint32_t window_index);
  // Flushes and closes the segment files; fsyncs them too when `durable` (a store part's segments,
  // which outlive the process; a store's own are scratch: the final arrays are what is synced).
  SegmentSummary finish(bool durable = false);

 private:
  SegmentSummary summary_;
  util::ChecksummedFileWriter node_keys_;
  util::ChecksummedFileWriter node_features_;
  util::ChecksummedFileWriter edge_index_;
  util::ChecksummedFileWriter edge_features_;
  util::ChecksummedFileWriter graph_records_;  // per graph: nodes, edges, window, label (u32 x 4)
};

}  // namespace headroom::store
