// Read access to a graph store: every array is memory-mapped, so opening costs no RAM and a graph
// is read straight from the page cache. docs/store-format.md documents the layout.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "headroom/store/store_metadata.hpp"
#include "headroom/util/mapped_file.hpp"

namespace headroom::store {

enum class StoreVerification {
  kMetadata,  // manifest checksum, array sizes, checksums and value ranges of the small arrays
              // (size index, offsets, splits): instant, reads no graph data. The default.
  kFull,      // additionally checksums the graph data arrays and checks every graph's values
              // (graph_values.hpp; reads the whole store once)
};

// One graph's arrays, viewing the mapped store (valid while the store lives).
struct GraphView {
  std::span<const float> node_features;  // num_nodes x node_feature_count
  std::span<const std::uint32_t> node_can_ids;
  std::span<const std::int32_t> edge_index;  // num_edges x 2, (source, target) local indices
  std::span<const float> edge_features;      // num_edges x edge_feature_count
  std::uint8_t label = 0;
  // Geometric stores only (empty otherwise): num_nodes x metadata().position_dimensions
  // coordinates, in the source's unit (QM9: ångström); and each node's parent, a local index or
  // -1 for a root (trees).
  std::span<const float> positions;
  std::span<const std::int32_t> parents;
  std::size_t num_nodes() const { return node_can_ids.size(); }
  std::size_t num_edges() const { return edge_index.size() / 2; }
};

// The per-graph size index. Reading it touches none of the graph data arrays.
struct GraphSizeIndex {
  std::span<const std::uint32_t> num_nodes;
  std::span<const std::uint32_t> num_edges;
  std::span<const std::uint8_t> label;
  std::span<const std::uint16_t> split;        // index into metadata().splits
  std::span<const std::uint32_t> file;         // index into metadata().files
  std::span<const std::uint16_t> attack_type;  // index into metadata().attack_types
  std::span<const std::uint32_t> window;       // window number within its file
  // Geometric stores only (empty otherwise): graph g's 1st-, 2nd- and 3rd-order paths at
  // [3g, 3g + 3) (store/graph_paths.hpp says which paths count).
  std::span<const std::uint32_t> num_paths{};
  std::span<const double> target{};  // a store with a graph target only (metadata().target_name)
};

// Immutable after open(); all methods are thread-safe. Views and tensors made from the store keep
// the mappings alive through shared ownership (see graph_tensors.hpp).
class GraphStore {
 public:
  // Throws StoreError naming the path and the reason (missing, not a store, incomplete, wrong
  // version, checksum mismatch, offsets that disagree with the size index or leave the arrays,
  // a size-index or split entry out of range). `access` kCopyOnWrite maps the arrays privately
  // and writable, for views handed to code that may write to them (the Python module): a write
  // changes this process's pages only, never the files.
  static GraphStore open(const std::filesystem::path& path,
                         StoreVerification verification = StoreVerification::kMetadata,
                         util::MappingAccess access = util::MappingAccess::kReadOnly);

  const StoreMetadata& metadata() const { return *metadata_; }
  const std::filesystem::path& path() const { return path_; }
  std::size_t num_graphs() const { return static_cast<std::size_t>(metadata_->num_graphs); }

  GraphSizeIndex size_index() const;
  GraphView graph(std::size_t graph_id) const;  // throws std::out_of_range

  std::span<const std::uint32_t> train_ids() const;
  std::span<const std::uint32_t> validation_ids() const;
  std::span<const std::uint32_t> test_ids() const;

  // Checksums every array against the manifest, then checks every graph's values
  // (check_graph_values); throws StoreError on the first mismatch.
  void verify_all() const;

  // The mapping of one array (see store_arrays.hpp for names).
  const std::shared_ptr<const util::MappedFile>& array(std::string_view name) const;
  std::uint64_t bytes_on_disk() const;  // arrays plus manifest

 private:
  template <typename T>
  std::span<const T> typed(std::string_view name) const;

  std::filesystem::path path_;
  std::shared_ptr<const StoreMetadata> metadata_;
  std::map<std::string, std::shared_ptr<const util::MappedFile>, std::less<>> arrays_;
  std::uint64_t manifest_bytes_ = 0;
  // Resolved once at open: graph() runs per graph on the batching path.
  std::span<const std::int64_t> node_offsets_;
  std::span<const std::int64_t> edge_offsets_;
  GraphView all_;  // every graph's arrays, whole
  std::span<const std::uint8_t> labels_;
};

}  // namespace headroom::store
