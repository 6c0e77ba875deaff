// Graph convolution with PyTorch Geometric's GCNConv semantics (Kipf & Welling):
//   out = D^-1/2 (A + I) D^-1/2 (x W) + b,
// where A holds the edges j -> i (row 0 source, row 1 target), a self-loop of weight 1 is added to
// every node that has none (existing self-loops are kept, as PyG's add_remaining_self_loops
// does), and D is the in-degree of A + I. The normalisation is symmetric and computed per call
// from the batch's edges, so the layer needs no cached graph.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

namespace headroom::nn {

struct GCNConvOptions {
  std::int64_t in_channels = 0;
  std::int64_t out_channels = 0;
  bool bias = true;
};

class GCNConvImpl : public torch::nn::Module {
 public:
  explicit GCNConvImpl(const GCNConvOptions& options);
  // x [N, in_channels]; edge_index int64 [2, E] -> [N, out_channels].
  at::Tensor forward(const at::Tensor& x, const at::Tensor& edge_index);
  void reset_parameters();  // Glorot for the weight, zero bias
  const GCNConvOptions& options() const { return options_; }

  at::Tensor weight;  // [out_channels, in_channels]
  at::Tensor bias_;   // [out_channels]; undefined without bias

 private:
  GCNConvOptions options_;
};
TORCH_MODULE(GCNConv);

}  // namespace headroom::nn
