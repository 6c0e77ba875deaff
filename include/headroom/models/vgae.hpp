// The KD-GAT variational graph autoencoder (upstream GraphAutoencoderNeighborhood): ID embedding
// + GAT encoder (GATConv -> BatchNorm -> ReLU -> dropout per layer), mu and log sigma^2 heads
// (log sigma^2 clamped), a sampled latent z (mu in eval mode, where upstream samples: evaluation
// stays deterministic), a GAT decoder ending in 10 sigmoid outputs (reconstructing node features
// 1..10), a CAN-ID classifier on z and a neighbourhood decoder on z predicting the multi-hot set of
// each node's out-neighbour IDs. The layers follow config.layout (vgae_layout.hpp).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include "headroom/models/graph_autoencoder.hpp"
#include "headroom/models/model_config.hpp"
#include "headroom/nn/gat_conv.hpp"

namespace headroom::models {

struct VgaeOutput {
  at::Tensor reconstruction;    // [N, in_features - 1], in (0, 1)
  at::Tensor id_logits;         // [N, num_ids]
  at::Tensor neighbour_logits;  // [N, num_ids]
  at::Tensor mu;                // [N, latent]
  at::Tensor logvar;            // [N, latent], clamped to +-logvar_clamp
  at::Tensor z;                 // [N, latent]
};

class VGAEImpl : public GraphAutoencoderImpl {
 public:
  explicit VGAEImpl(const VgaeConfig& config);
  // x float [N, in_features] (column 0: ID index), edge_index int64 [2, E].
  VgaeOutput forward(const at::Tensor& x, const at::Tensor& edge_index);
  const VgaeConfig& config() const { return config_; }
  void set_gradient_checkpointing(bool on) override { config_.gradient_checkpointing = on; }

 private:
  VgaeConfig config_;
  torch::nn::Embedding id_embedding_{nullptr};
  std::vector<nn::GATConv> encoder_;
  std::vector<torch::nn::BatchNorm1d> encoder_norms_;
  torch::nn::Linear mu_{nullptr};
  torch::nn::Linear logvar_{nullptr};
  std::vector<nn::GATConv> decoder_;
  std::vector<torch::nn::BatchNorm1d> decoder_norms_;
  torch::nn::Linear id_classifier_{nullptr};
  torch::nn::Sequential neighbour_decoder_{nullptr};
};
TORCH_MODULE(VGAE);

}  // namespace headroom::models
