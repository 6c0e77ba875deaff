// Reductions over segments given by an index vector (e.g. a node's incoming edges, a graph's
// nodes): the scatter operations message passing needs, on any device and dtype.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace headroom::nn {

// Softmax of `src` [E, ...] within each group of rows sharing index[e] (int64 [E]) in
// 0..num_segments-1; numerically stable (the group maximum is subtracted first).
at::Tensor segment_softmax(const at::Tensor& src, const at::Tensor& index,
                           std::int64_t num_segments);

// Sum / mean of `src` [N, F] rows per segment -> [num_segments, F]; an empty segment gives zeros.
at::Tensor segment_sum(const at::Tensor& src, const at::Tensor& index, std::int64_t num_segments);
at::Tensor segment_mean(const at::Tensor& src, const at::Tensor& index, std::int64_t num_segments);

// Graph-level mean of node rows: x [N, F], batch int64 [N] -> [num_graphs, F].
inline at::Tensor global_mean_pool(const at::Tensor& x, const at::Tensor& batch,
                                   std::int64_t num_graphs) {
  return segment_mean(x, batch, num_graphs);
}

}  // namespace headroom::nn
