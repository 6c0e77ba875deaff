// Read access to a node-graph store (node_graph_metadata.hpp): one graph, every array
// memory-mapped, so opening costs no RAM and every split (train, validation, test) reads the same
// mapped graph -- a split is the set of nodes whose node_split says so, never a copy.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "headroom/store/graph_store.hpp"
#include "headroom/store/node_graph_metadata.hpp"
#include "headroom/util/mapped_file.hpp"

namespace headroom::store {

// Immutable after open(); all methods are thread-safe. Copies share the mappings (cheap); the
// spans stay valid while any copy lives.
class NodeGraphStore {
 public:
  // Checks the manifest (format, version, checksum, kind), every array's dtype, file name, shape
  // and size before it maps any; then the checksums and values of the per-node arrays: row
  // offsets from 0, never going back, ending at num_edges; node kinds inside node_kinds; labels
  // -1 or a class; split ids 0..3, and a label on every node of a split. kFull additionally
  // checksums column_index and edge_weight and checks their values (columns inside [0, N),
  // ascending within a row; weights finite). Throws StoreError naming the path and the reason.
  static NodeGraphStore open(const std::filesystem::path& path,
                             StoreVerification verification = StoreVerification::kMetadata);

  const NodeGraphMetadata& metadata() const { return *metadata_; }
  const std::filesystem::path& path() const { return path_; }
  std::size_t num_nodes() const { return static_cast<std::size_t>(metadata_->num_nodes); }
  std::size_t num_edges() const { return static_cast<std::size_t>(metadata_->num_edges); }

  std::span<const std::int64_t> row_offsets() const { return row_offsets_; }
  std::span<const std::int32_t> column_index() const { return column_index_; }
  std::span<const float> edge_weight() const { return edge_weight_; }
  std::span<const std::uint8_t> node_kind() const { return node_kind_; }
  std::span<const std::int32_t> node_label() const { return node_label_; }
  std::span<const std::uint8_t> node_split() const { return node_split_; }

  // The nodes of one split, ascending (a scan of node_split: N bytes).
  std::vector<std::uint32_t> nodes_in(NodeSplit split) const;

  // Checksums every array against the manifest and checks the edge arrays' values.
  void verify_all() const;

  const std::shared_ptr<const util::MappedFile>& array(std::string_view name) const;
  std::uint64_t bytes_on_disk() const;  // arrays plus manifest

 private:
  template <typename T>
  std::span<const T> typed(std::string_view name) const;

  std::filesystem::path path_;
  std::shared_ptr<const NodeGraphMetadata> metadata_;
  std::map<std::string, std::shared_ptr<const util::MappedFile>, std::less<>> arrays_;
  std::uint64_t manifest_bytes_ = 0;
  std::span<const std::int64_t> row_offsets_;
  std::span<const std::int32_t> column_index_;
  std::span<const float> edge_weight_;
  std::span<const std::uint8_t> node_kind_;
  std::span<const std::int32_t> node_label_;
  std::span<const std::uint8_t> node_split_;
};

}  // namespace headroom::store
