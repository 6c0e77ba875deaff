#include "headroom/loader/graph_batch.hpp"

#include <torch/torch.h>

namespace headroom::loader {
namespace {

at::Tensor moved(const at::Tensor& tensor, const c10::Device& device, bool non_blocking) {
  if (!tensor.defined()) return tensor;
  return tensor.to(device, non_blocking);
}

std::int64_t nbytes(const at::Tensor& tensor) {
  return tensor.defined() ? static_cast<std::int64_t>(tensor.nbytes()) : 0;
}

}  // namespace

GraphBatch GraphBatch::to(const c10::Device& device, bool non_blocking) const {
  GraphBatch out = *this;
  out.x = moved(x, device, non_blocking);
  out.edge_index = moved(edge_index, device, non_blocking);
  out.edge_attr = moved(edge_attr, device, non_blocking);
  out.batch = moved(batch, device, non_blocking);
  out.y = moved(y, device, non_blocking);
  out.graph_ids = moved(graph_ids, device, non_blocking);
  out.pos = moved(pos, device, non_blocking);
  out.parent = moved(parent, device, non_blocking);
  out.target = moved(target, device, non_blocking);
  if (!out.host_graph_ids.defined() && graph_ids.defined() && graph_ids.is_cpu())
    out.host_graph_ids = graph_ids;
  return out;
}

std::int64_t GraphBatch::bytes() const {
  return nbytes(x) + nbytes(edge_index) + nbytes(edge_attr) + nbytes(batch) + nbytes(y) +
         nbytes(graph_ids) + nbytes(pos) + nbytes(parent) + nbytes(target);
}

}  // namespace headroom::loader

namespace headroom::loader {

std::vector<std::uint32_t> GraphBatch::graph_id_list() const {
  const auto& source = host_graph_ids.defined() ? host_graph_ids : graph_ids;
  const auto host = source.to(torch::kCPU).to(torch::kInt64).contiguous();
  const auto* data = host.data_ptr<std::int64_t>();
  return {data, data + host.numel()};
}

}  // namespace headroom::loader
