// GcnClassifier: a small graph-convolution classifier, the third model family beside GATWithJK
// and the VGAE: ID embedding of node feature 0, concatenated with the other features -> layers x
// (GCNConv -> ReLU -> dropout) -> global mean pool -> linear -> class logits. No attention, so it
// needs far less memory per edge than the GAT; a baseline for the same stages.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/models/graph_classifier.hpp"
#include "headroom/models/model_config.hpp"
#include "headroom/nn/gcn_conv.hpp"

namespace headroom::models {

struct GcnConfig {
  std::int64_t num_ids = 0;       // CAN-ID vocabulary size + 1 (the out-of-vocabulary index)
  std::int64_t in_features = 11;  // node features; feature 0 is the ID index
  std::int64_t embedding_dim = 16;
  std::int64_t hidden = 64;
  std::int64_t layers = 3;
  std::int64_t num_classes = 2;
  double dropout = 0.2;
};

// Teacher: 3 layers of 64 channels; student: 2 layers of 32.
GcnConfig gcn_preset(ModelSize size, std::int64_t num_ids);

void to_json(nlohmann::json& json, const GcnConfig& config);
void from_json(const nlohmann::json& json, GcnConfig& config);

class GcnClassifierImpl : public GraphClassifierImpl {
 public:
  explicit GcnClassifierImpl(const GcnConfig& config);
  // x float [N, in_features] (column 0: ID index), edge_index int64 [2, E], batch int64 [N]
  // -> logits [num_graphs, num_classes].
  at::Tensor forward(const at::Tensor& x, const at::Tensor& edge_index, const at::Tensor& batch,
                     std::int64_t num_graphs) override;
  const GcnConfig& config() const { return config_; }

 private:
  GcnConfig config_;
  torch::nn::Embedding id_embedding_{nullptr};
  std::vector<nn::GCNConv> convs_;
  torch::nn::Linear head_{nullptr};
};
TORCH_MODULE(GcnClassifier);

}  // namespace headroom::models
