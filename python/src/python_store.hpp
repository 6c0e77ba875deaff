// The store object behind headroom.Store (python/headroom/store.py).
#pragma once

#include <torch/torch.h>

#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "headroom/loader/graph_tensors.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/store/store_arrays.hpp"
#include "python_tensor.hpp"

namespace headroom::python {

namespace arrays = store::arrays;

// One open store. The whole arrays are viewed once; a graph is a narrow() of them, so reading one
// costs two offset lookups and no copy. Views stay valid after the store is closed: every tensor
// holds its mapping (loader/graph_tensors.hpp).
class PythonStore {
 public:
  PythonStore(const std::string& path, bool verify)
      : store_(std::make_shared<store::GraphStore>(store::GraphStore::open(
            path, verify ? store::StoreVerification::kFull : store::StoreVerification::kMetadata,
            util::MappingAccess::kCopyOnWrite))),
        node_features_(loader::array_tensor(*store_, arrays::kNodeFeatures)),
        node_can_ids_(loader::array_tensor(*store_, arrays::kNodeCanIds)),
        edge_index_(loader::array_tensor(*store_, arrays::kEdgeIndex)),
        edge_features_(loader::array_tensor(*store_, arrays::kEdgeFeatures)),
        node_offsets_(store_->array(arrays::kNodeOffsets)->bytes()),
        edge_offsets_(store_->array(arrays::kEdgeOffsets)->bytes()),
        labels_(store_->size_index().label) {}

  const store::GraphStore& store() const { return *store_; }
  std::size_t size() const { return store_->num_graphs(); }
  std::string path() const { return store_->path().string(); }
  std::uint64_t bytes_on_disk() const { return store_->bytes_on_disk(); }
  std::string metadata_json() const { return nlohmann::json(store_->metadata()).dump(); }

  // (x, edge_index, edge_attr, can_ids, label) of one graph; edge_index is [2, E], a transposed
  // view of the stored [E, 2].
  nanobind::tuple graph(std::int64_t graph_id) const {
    if (graph_id < 0 || static_cast<std::size_t>(graph_id) >= size())
      throw nanobind::index_error(fmt::format("graph {} is outside the store ({} graphs: 0..{})",
                                              graph_id, size(), size() - 1)
                                      .c_str());
    const auto node_begin = offset(node_offsets_, graph_id);
    const auto nodes = offset(node_offsets_, graph_id + 1) - node_begin;
    const auto edge_begin = offset(edge_offsets_, graph_id);
    const auto edges = offset(edge_offsets_, graph_id + 1) - edge_begin;
    const auto label = labels_[static_cast<std::size_t>(graph_id)];
    return nanobind::make_tuple(dlpack_capsule(node_features_.narrow(0, node_begin, nodes)),
                                dlpack_capsule(edge_index_.narrow(0, edge_begin, edges).t()),
                                dlpack_capsule(edge_features_.narrow(0, edge_begin, edges)),
                                dlpack_capsule(node_can_ids_.narrow(0, node_begin, nodes)),
                                static_cast<int>(label));
  }

  // A small array of the store (size index, split lists) as an int64 copy: callers index with it
  // and may write to it.
  nanobind::object small_array(const std::string& name) const {
    if (!is_small_array(name))
      throw nanobind::value_error(("no size-index or split array '" + name + "'").c_str());
    return dlpack_capsule(loader::array_tensor(*store_, name).to(torch::kInt64));
  }

 private:
  static std::int64_t offset(std::span<const std::byte> offsets, std::int64_t index) {
    return reinterpret_cast<const std::int64_t*>(offsets.data())[index];
  }
  static bool is_small_array(std::string_view name) {
    for (const auto small :
         {arrays::kGraphNumNodes, arrays::kGraphNumEdges, arrays::kGraphLabel, arrays::kGraphSplit,
          arrays::kGraphFile, arrays::kGraphAttackType, arrays::kGraphWindow, arrays::kSplitTrain,
          arrays::kSplitValidation, arrays::kSplitTest})
      if (name == small) return true;
    return false;
  }

  std::shared_ptr<store::GraphStore> store_;
  at::Tensor node_features_;
  at::Tensor node_can_ids_;
  at::Tensor edge_index_;
  at::Tensor edge_features_;
  std::span<const std::byte> node_offsets_;
  std::span<const std::byte> edge_offsets_;
  std::span<const std::uint8_t> labels_;
};

}  // namespace headroom::python
