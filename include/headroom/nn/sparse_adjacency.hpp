// A graph's weighted adjacency as a sparse operator for message passing on one big graph: A·H as
// a sparse-dense product, never one row per edge per channel (on 20 Newsgroups' graph, 26.7 M
// entries × 200 channels would be 21 GB per layer). Backward multiplies by Aᵀ, which for a
// symmetric A (TextGCN's D^-1/2 (A + I) D^-1/2) is A itself: no transposed copy is made.
//
// On the CPU the product is headroom's own row-parallel kernel over the CSR arrays, which may view
// a memory-mapped store without a copy (torch's CPU sparse-CSR product wants a CSR tensor whose
// index arrays share one dtype, and measured slower; docs/benchmarks.md); on CUDA it is torch's
// sparse CSR product (cuSPARSE).
// Immutable; thread-safe to share. The tensors it views must outlive it (a store's mapping).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>

namespace headroom::nn {

class SparseAdjacency {
 public:
  SparseAdjacency() = default;
  // `row_offsets` int64 [N + 1], `columns` int32 [E] (each row's ascending), `weights` float32
  // [E]: CSR on one device. `symmetric`: A equals Aᵀ (the caller vouches; backward relies on it).
  // Throws std::invalid_argument for inconsistent shapes or dtypes, or a non-symmetric A
  // (not supported yet).
  SparseAdjacency(at::Tensor row_offsets, at::Tensor columns, at::Tensor weights, bool symmetric);

  // A · dense: dense float32 [N, C] -> [N, C], differentiable in `dense` (not in A's weights).
  // Under autocast the product runs in float32.
  at::Tensor multiply(const at::Tensor& dense) const;

  // A · dense when the caller already holds it: `product` must be what multiply(dense) returned
  // for this `dense`, unchanged since (computed without autograd, e.g. by an evaluation pass).
  // Returns it attached to autograd as multiply(dense) would be, so backward runs as usual, and
  // the product is not computed again. Throws std::invalid_argument for a product of the wrong
  // shape.
  at::Tensor attach_product(const at::Tensor& dense, const at::Tensor& product) const;

  // Rows [first, end) of A · dense, without autograd: dense float32 [N, C] on any device (A's
  // rows travel to it when A is elsewhere) -> [end - first, C] there. Inference over one big
  // graph in row blocks holds one block's activations, not N rows. Throws std::invalid_argument
  // for rows outside [0, N] or a wrong shape, std::logic_error under autograd.
  at::Tensor multiply_rows(std::int64_t first, std::int64_t end, const at::Tensor& dense) const;

  // Rows `rows` (int64 ids in [0, N), any order, on the host) of A · dense, without autograd:
  // [rows.numel(), C] on dense's device. On the CPU the kernel reads the listed rows in place;
  // elsewhere they travel in blocks. Throws as multiply_rows does.
  at::Tensor multiply_listed_rows(const at::Tensor& rows, const at::Tensor& dense) const;

  // A copy on `device` (this one when already there).
  SparseAdjacency to(const c10::Device& device) const;

  std::int64_t num_nodes() const { return num_nodes_; }
  std::int64_t num_entries() const { return weights_.defined() ? weights_.numel() : 0; }
  // Bytes of its arrays (on the device: what training holds for the graph).
  std::int64_t bytes() const;
  const at::Tensor& row_offsets() const { return row_offsets_; }
  const at::Tensor& columns() const { return columns_; }
  const at::Tensor& weights() const { return weights_; }

 private:
  at::Tensor row_offsets_;
  at::Tensor columns_;
  at::Tensor weights_;
  std::int64_t num_nodes_ = 0;
};

// The CPU kernel alone, without autograd: out[i] = Σ_e weights[e] · dense[columns[e]] over row
// i's entries. Rows run in parallel on torch's intra-op threads. dense float32 [N, C] contiguous.
at::Tensor csr_product_cpu(const at::Tensor& row_offsets, const at::Tensor& columns,
                           const at::Tensor& weights, const at::Tensor& dense);
// The same for the listed rows only: out[k] = Σ_e weights[e] · dense[columns[e]] over the entries
// of row rows[k] (int64 [K]). Rows run in parallel on torch's intra-op threads.
at::Tensor csr_product_rows_cpu(const at::Tensor& row_offsets, const at::Tensor& columns,
                                const at::Tensor& weights, const at::Tensor& rows,
                                const at::Tensor& dense);

}  // namespace headroom::nn
