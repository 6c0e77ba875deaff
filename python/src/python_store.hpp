// The store object behind headroom.Store (python/headroom/store.py): a graph store opened
// copy-on-write, whose graphs are handed to Python as DLPack capsules over the mapped arrays.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "headroom/store/graph_store.hpp"

namespace headroom::python {

// Immutable after construction. Capsules (and the tensors made from them) hold their mapping, so
// they stay valid after the PythonStore is gone.
class PythonStore {
 public:
  // Throws store::StoreError naming the store and the reason.
  PythonStore(const std::string& path, bool verify);

  const store::GraphStore& store() const { return *store_; }
  std::size_t size() const { return store_->num_graphs(); }
  std::string path() const { return store_->path().string(); }
  std::uint64_t bytes_on_disk() const { return store_->bytes_on_disk(); }
  std::string metadata_json() const;
  // Distinct values of node feature 0, the identity models embed (store::identity_classes).
  std::uint32_t identity_classes() const { return store::identity_classes(store_->metadata()); }

  // (x, edge_index, edge_attr, can_ids, label) of one graph, the four arrays as capsules without a
  // copy; edge_index is [2, E], a transposed view of the stored [E, 2]. A negative id counts from
  // the end. Throws nanobind's index_error naming the store's size for an id outside it.
  nanobind::tuple graph(std::int64_t graph_id) const;

  // A small array of the store (size index, split lists) as an int64 copy: callers index with it
  // and may write to it. Throws value_error for any other name.
  nanobind::object small_array(const std::string& name) const;

 private:
  std::shared_ptr<store::GraphStore> store_;
  std::shared_ptr<const util::MappedFile> node_features_;
  std::shared_ptr<const util::MappedFile> node_can_ids_;
  std::shared_ptr<const util::MappedFile> edge_index_;
  std::shared_ptr<const util::MappedFile> edge_features_;
  std::span<const std::int64_t> node_offsets_;
  std::span<const std::int64_t> edge_offsets_;
  std::span<const std::uint8_t> labels_;
  std::int64_t node_feature_count_ = 0;
  std::int64_t edge_feature_count_ = 0;
};

}  // namespace headroom::python
