// Graph attention convolution with PyTorch Geometric's GATConv semantics (Velickovic et al.):
//   h = x W  (per head),  e_ij = LeakyReLU(a_src . h_j + a_dst . h_i, 0.2) for edge j -> i,
//   alpha_ij = softmax over i's incoming edges (self-loop included), dropout on alpha,
//   out_i = sum_j alpha_ij h_j, heads concatenated (or averaged), plus a bias.
// Existing self-loops are replaced by exactly one per node, as PyG does.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

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
};

struct GATConvResult {
  at::Tensor out;                 // [N, heads*out_channels] or [N, out_channels]
  at::Tensor attention_edges;     // int64 [2, E'] (with self-loops) the coefficients belong to
  at::Tensor attention;           // [E', heads], after softmax and dropout
};

class GATConvImpl : public torch::nn::Module {
 public:
  explicit GATConvImpl(const GATConvOptions& options);
  // x [N, in_channels]; edge_index int64 [2, E] (row 0 source, row 1 target).
  at::Tensor forward(const at::Tensor& x, const at::Tensor& edge_index);
  GATConvResult forward_with_attention(const at::Tensor& x, const at::Tensor& edge_index);
  void reset_parameters();  // Glorot for the projection and attention vectors, zero bias
  std::int64_t output_channels() const;

  const GATConvOptions& options() const { return options_; }
  at::Tensor weight;      // [heads*out_channels, in_channels] (no bias in the projection)
  at::Tensor att_src;     // [1, heads, out_channels]
  at::Tensor att_dst;     // [1, heads, out_channels]
  at::Tensor bias_;       // [heads*out_channels] or [out_channels]; undefined without bias

 private:
  GATConvOptions options_;
};
TORCH_MODULE(GATConv);

}  // namespace headroom::nn
