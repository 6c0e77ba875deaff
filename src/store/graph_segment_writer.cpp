#include "headroom/store/graph_segment_writer.hpp"

#include <array>
#include <span>
#include <stdexcept>

namespace headroom::store {
namespace {

std::filesystem::path with_suffix(const std::filesystem::path& prefix, const char* suffix) {
  auto path = prefix;
  path += suffix;
  return path;
}

constexpr std::size_t kSegmentBuffer = 256 << 10;

}  // namespace

GraphSegmentWriter::GraphSegmentWriter(std::filesystem::path prefix, SegmentKeys keys,
                                       bool checksummed)
    : summary_{prefix, keys, 0, 0, 0},
      node_keys_(with_suffix(prefix, ".node_keys"), kSegmentBuffer, checksummed),
      node_features_(with_suffix(prefix, ".node_features"), kSegmentBuffer, checksummed),
      edge_index_(with_suffix(prefix, ".edge_index"), kSegmentBuffer, checksummed),
      edge_features_(with_suffix(prefix, ".edge_features"), kSegmentBuffer, checksummed),
      graph_records_(with_suffix(prefix, ".graphs"), kSegmentBuffer, checksummed) {}

void GraphSegmentWriter::append(const graph::WindowGraph& graph, std::uint32_t window_index) {
  if (summary_.graphs == 0) summary_.node_feature_count = graph.node_feature_count;
  if (graph.node_feature_count != summary_.node_feature_count)
    throw std::invalid_argument(
        "GraphSegmentWriter: graphs of one segment differ in node features");
  node_keys_.write_values(std::span<const std::uint32_t>(graph.node_keys));
  node_features_.write_values(std::span<const float>(graph.node_features));
  edge_index_.write_values(std::span<const std::int32_t>(graph.edge_index));
  edge_features_.write_values(std::span<const float>(graph.edge_features));
  const std::array<std::uint32_t, 4> record = {static_cast<std::uint32_t>(graph.num_nodes()),
                                               static_cast<std::uint32_t>(graph.num_edges()),
                                               window_index, graph.label};
  graph_records_.write_values(std::span<const std::uint32_t>(record));
  ++summary_.graphs;
  summary_.nodes += graph.num_nodes();
  summary_.edges += graph.num_edges();
}

SegmentSummary GraphSegmentWriter::finish(bool durable) {
  node_keys_.close(durable);
  node_features_.close(durable);
  edge_index_.close(durable);
  edge_features_.close(durable);
  graph_records_.close(durable);
  // In kSegmentFileSuffixes order.
  summary_.checksums = {graph_records_.checksum(), node_keys_.checksum(), node_features_.checksum(),
                        edge_index_.checksum(), edge_features_.checksum()};
  return summary_;
}

}  // namespace headroom::store
