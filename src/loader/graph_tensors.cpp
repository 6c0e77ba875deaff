#include "headroom/loader/graph_tensors.hpp"

#include <torch/torch.h>

#include "headroom/store/store_arrays.hpp"
#include "headroom/store/store_error.hpp"

namespace headroom::loader {
using store::ArrayRecord;
using store::GraphStore;
using store::GraphView;
using store::StoreError;
namespace arrays = store::arrays;
namespace {

torch::Dtype torch_dtype(const std::string& dtype) {
  if (dtype == "float32") return torch::kFloat32;
  if (dtype == "int32") return torch::kInt32;
  if (dtype == "int64") return torch::kInt64;
  if (dtype == "uint32") return torch::kUInt32;
  if (dtype == "uint16") return torch::kUInt16;
  if (dtype == "uint8") return torch::kUInt8;
  throw StoreError("unsupported dtype " + dtype);
}

// A tensor over [offset, offset + rows) rows of an array; the deleter holds the mapping.
at::Tensor view_rows(const GraphStore& store, std::string_view name, std::int64_t first_row,
                     std::int64_t rows) {
  const ArrayRecord& record = store.metadata().arrays.at(std::string(name));
  const auto& mapped = store.array(name);
  std::vector<std::int64_t> shape(record.shape.begin(), record.shape.end());
  std::int64_t row_elements = 1;
  for (std::size_t d = 1; d < shape.size(); ++d) row_elements *= shape[d];
  shape[0] = rows;
  const auto dtype = torch_dtype(record.dtype);
  const auto element_bytes = static_cast<std::int64_t>(c10::elementSize(dtype));
  // from_blob wants a mutable pointer; the tensor is documented read-only and the pages are
  // mapped PROT_READ, so a write cannot corrupt the store.
  auto* base = const_cast<std::byte*>(mapped->bytes().data());
  void* data = base + first_row * row_elements * element_bytes;
  auto keep_alive = mapped;
  return torch::from_blob(
      data, shape, [keep_alive](void*) {}, torch::TensorOptions().dtype(dtype));
}

}  // namespace

GraphTensors graph_tensors(const GraphStore& store, std::size_t graph_id) {
  const GraphView view = store.graph(graph_id);
  const auto node_offsets = store.array(arrays::kNodeOffsets)->bytes();
  const auto edge_offsets = store.array(arrays::kEdgeOffsets)->bytes();
  const auto* nodes = reinterpret_cast<const std::int64_t*>(node_offsets.data());
  const auto* edges = reinterpret_cast<const std::int64_t*>(edge_offsets.data());
  GraphTensors tensors;
  tensors.x = view_rows(store, arrays::kNodeFeatures, nodes[graph_id],
                        static_cast<std::int64_t>(view.num_nodes()));
  tensors.edge_index = view_rows(store, arrays::kEdgeIndex, edges[graph_id],
                                 static_cast<std::int64_t>(view.num_edges()))
                           .t();
  tensors.edge_attr = view_rows(store, arrays::kEdgeFeatures, edges[graph_id],
                                static_cast<std::int64_t>(view.num_edges()));
  tensors.y = view.label;
  return tensors;
}

at::Tensor array_tensor(const GraphStore& store, std::string_view name) {
  const ArrayRecord& record = store.metadata().arrays.at(std::string(name));
  return view_rows(store, name, 0, static_cast<std::int64_t>(record.shape.at(0)));
}

}  // namespace headroom::loader
