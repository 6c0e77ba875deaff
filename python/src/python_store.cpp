#include "python_store.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "headroom/loader/graph_tensors.hpp"
#include "headroom/store/store_arrays.hpp"
#include "mapped_tensor.hpp"
#include "python_tensor.hpp"

namespace headroom::python {
namespace {

namespace arrays = store::arrays;

template <typename T>
std::span<const T> typed(const util::MappedFile& file) {
  const auto bytes = file.bytes();
  return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
}

// Rows [first, first + count) of a row-major [*, columns] array of T, as a capsule.
template <typename T>
nanobind::object rows(const std::shared_ptr<const util::MappedFile>& file, DLDataType dtype,
                      std::int64_t first, std::int64_t count, std::int64_t columns) {
  MappedArrayView view{file, typed<T>(*file).data() + first * columns, dtype};
  view.ndim = 2;
  view.shape = {count, columns};
  view.strides = {columns, 1};
  return mapped_array_capsule(std::move(view));
}

// Elements [first, first + count) of a vector of T, as a capsule.
template <typename T>
nanobind::object elements(const std::shared_ptr<const util::MappedFile>& file, DLDataType dtype,
                          std::int64_t first, std::int64_t count) {
  MappedArrayView view{file, typed<T>(*file).data() + first, dtype};
  view.shape = {count, 0};
  view.strides = {1, 0};
  return mapped_array_capsule(std::move(view));
}

bool is_small_array(std::string_view name) {
  for (const auto small :
       {arrays::kGraphNumNodes, arrays::kGraphNumEdges, arrays::kGraphLabel, arrays::kGraphSplit,
        arrays::kGraphFile, arrays::kGraphAttackType, arrays::kGraphWindow, arrays::kSplitTrain,
        arrays::kSplitValidation, arrays::kSplitTest})
    if (name == small) return true;
  return false;
}

}  // namespace

PythonStore::PythonStore(const std::string& path, bool verify)
    : store_(std::make_shared<store::GraphStore>(store::GraphStore::open(
          path, verify ? store::StoreVerification::kFull : store::StoreVerification::kMetadata,
          util::MappingAccess::kCopyOnWrite))),
      node_features_(store_->array(arrays::kNodeFeatures)),
      node_can_ids_(store_->array(arrays::kNodeCanIds)),
      edge_index_(store_->array(arrays::kEdgeIndex)),
      edge_features_(store_->array(arrays::kEdgeFeatures)),
      node_offsets_(typed<std::int64_t>(*store_->array(arrays::kNodeOffsets))),
      edge_offsets_(typed<std::int64_t>(*store_->array(arrays::kEdgeOffsets))),
      labels_(store_->size_index().label),
      node_feature_count_(store_->metadata().node_feature_count),
      edge_feature_count_(store_->metadata().edge_feature_count) {}

std::string PythonStore::metadata_json() const { return nlohmann::json(store_->metadata()).dump(); }

nanobind::tuple PythonStore::graph(std::int64_t graph_id) const {
  const auto requested = graph_id;
  if (graph_id < 0) graph_id += static_cast<std::int64_t>(size());  // Python's negative indices
  if (graph_id < 0 || static_cast<std::size_t>(graph_id) >= size())
    throw nanobind::index_error(fmt::format("graph {} is outside the store ({} graphs: 0..{})",
                                            requested, size(), size() - 1)
                                    .c_str());
  const auto id = static_cast<std::size_t>(graph_id);
  const auto node_begin = node_offsets_[id];
  const auto nodes = node_offsets_[id + 1] - node_begin;
  const auto edge_begin = edge_offsets_[id];
  const auto edges = edge_offsets_[id + 1] - edge_begin;
  // edge_index is stored [E, 2] (source, target); [2, E] with strides (1, 2) views it transposed.
  MappedArrayView edge_index{edge_index_, typed<std::int32_t>(*edge_index_).data() + 2 * edge_begin,
                             kDlInt32};
  edge_index.ndim = 2;
  edge_index.shape = {2, edges};
  edge_index.strides = {1, 2};
  return nanobind::make_tuple(
      rows<float>(node_features_, kDlFloat32, node_begin, nodes, node_feature_count_),
      mapped_array_capsule(std::move(edge_index)),
      rows<float>(edge_features_, kDlFloat32, edge_begin, edges, edge_feature_count_),
      elements<std::uint32_t>(node_can_ids_, kDlUInt32, node_begin, nodes),
      static_cast<int>(labels_[id]));
}

nanobind::object PythonStore::small_array(const std::string& name) const {
  if (!is_small_array(name))
    throw nanobind::value_error(("no size-index or split array '" + name + "'").c_str());
  return dlpack_capsule(loader::array_tensor(*store_, name).to(torch::kInt64));
}

}  // namespace headroom::python
