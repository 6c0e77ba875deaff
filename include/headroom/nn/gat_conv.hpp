// Graph attention convolution with PyTorch Geometric's GATConv semantics (Velickovic et al.):
//   h = x W  (per head),  e_ij = LeakyReLU(a_src . h_j + a_dst . h_i, 0.2) for edge j -> i,
//   alpha_ij = softmax over i's incoming edges (self-loop included), dropout on alpha,
//   out_i = sum_j alpha_ij h_j, heads concatenated (or averaged), plus a bias.
// Existing self-loops are replaced by exactly one per node, as PyG does.
//
// forward() runs the fused kernel (fused_gat.hpp) where this build has one for the device and
// options.fused is set: it never materialises per-edge messages. forward_with_attention() is
// the reference formulation with PyG's tensors (edges x heads x channels messages); tests and
// the benchmarks compare the two.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

#include "headroom/nn/attention_graph.hpp"

namespace headroom::nn {

struct GATConvOptions {
  std::int64_t in_channels = 0;
  std::int64_t out_channels = 0;  // per head
  std::int64_t heads = 1;
  bool concat = true;  // output [N, heads*out] (true) or the mean over heads [N, out]
  double negative_slope = 0.2;
  double dropout = 0.0;  // on attention coefficients, in training mode only
  bool add_self_loops = true;
  bool bias = true;
  bool fused = true;  // the fused kernel where available; false: the reference formulation
};

struct GATConvResult {
  at::Tensor out;              // [N, heads*out_channels] or [N, out_channels]
  at::Tensor attention_edges;  // int64 [2, E'] (with self-loops) the coefficients belong to
  at::Tensor attention;        // [E', heads], after softmax and dropout
};

class GATConvImpl : public torch::nn::Module {
 public:
  explicit GATConvImpl(const GATConvOptions& options);
  // x [N, in_channels]; edge_index int64 [2, E] (row 0 source, row 1 target).
  at::Tensor forward(const at::Tensor& x, const at::Tensor& edge_index);
  // The same with the adjacency built once per batch (build_attention_graph) and shared by
  // layers.
  at::Tensor forward(const at::Tensor& x, const AttentionGraph& graph);
  GATConvResult forward_with_attention(const at::Tensor& x, const at::Tensor& edge_index);
  void reset_parameters();  // Glorot for the projection and attention vectors, zero bias
  std::int64_t output_channels() const;

  const GATConvOptions& options() const { return options_; }
  // Switches between the fused kernel and the reference formulation (benchmarks' A/B).
  void use_fused_kernel(bool fused) { options_.fused = fused; }
  at::Tensor weight;   // [heads*out_channels, in_channels] (no bias in the projection)
  at::Tensor att_src;  // [1, heads, out_channels]
  at::Tensor att_dst;  // [1, heads, out_channels]
  at::Tensor bias_;    // [heads*out_channels] or [out_channels]; undefined without bias

 private:
  struct Projection {
    at::Tensor h;          // [N, heads, out_channels]
    at::Tensor alpha_src;  // [N, heads]
    at::Tensor alpha_dst;  // [N, heads]
  };
  Projection project(const at::Tensor& x) const;
  bool runs_fused(const at::Tensor& x) const;
  void check_input(const at::Tensor& x) const;
  // Heads concatenated or averaged, plus the bias: per_head [N, heads, out_channels].
  at::Tensor finish(const at::Tensor& per_head) const;

  GATConvOptions options_;
};
TORCH_MODULE(GATConv);

}  // namespace headroom::nn
