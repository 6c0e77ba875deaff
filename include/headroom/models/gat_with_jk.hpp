// GATWithJK, the KD-GAT graph classifier: ID embedding of node feature 0, concatenated with the
// other features -> layers x (GATConv -> ReLU -> dropout) -> jumping knowledge (concatenation of
// every layer's output) -> global mean pool -> fully connected layers -> class logits.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/pimpl.h>

#include "headroom/models/graph_classifier.hpp"
#include "headroom/models/model_config.hpp"
#include "headroom/nn/gat_conv.hpp"

namespace headroom::models {

class GATWithJKImpl : public GraphClassifierImpl {
 public:
  explicit GATWithJKImpl(const GatConfig& config);
  // x float [N, in_features] (column 0: ID index), edge_index int64 [2, E], batch int64 [N]
  // -> logits [num_graphs, num_classes]. Checkpoints each GAT layer when configured and training.
  at::Tensor forward(const at::Tensor& x, const at::Tensor& edge_index, const at::Tensor& batch,
                     std::int64_t num_graphs) override;
  const GatConfig& config() const { return config_; }
  void set_gradient_checkpointing(bool on) override { config_.gradient_checkpointing = on; }

 private:
  GatConfig config_;
  torch::nn::Embedding id_embedding_{nullptr};
  std::vector<nn::GATConv> convs_;
  torch::nn::Sequential head_{nullptr};
};
TORCH_MODULE(GATWithJK);

}  // namespace headroom::models
