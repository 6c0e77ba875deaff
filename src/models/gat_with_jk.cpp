#include "headroom/models/gat_with_jk.hpp"

#include <torch/torch.h>

#include <stdexcept>
#include <string>

#include "headroom/models/id_embedding.hpp"
#include "headroom/nn/attention_graph.hpp"
#include "headroom/nn/checkpoint.hpp"
#include "headroom/nn/relu_dropout.hpp"
#include "headroom/nn/segment_ops.hpp"

namespace headroom::models {
namespace {

void validate(const GatConfig& config) {
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("GATWithJK: " + what);
  };
  require(config.num_ids > 0, "num_ids must be positive");
  require(config.in_features >= 1, "in_features must be at least 1 (the ID column)");
  require(config.embedding_dim > 0, "embedding_dim must be positive");
  require(config.hidden > 0 && config.heads > 0, "hidden and heads must be positive");
  require(config.layers >= 1, "layers must be at least 1");
  require(config.fc_layers >= 1, "fc_layers must be at least 1");
  require(config.num_classes >= 1, "num_classes must be at least 1");
  require(config.dropout >= 0.0 && config.dropout < 1.0, "dropout must be in [0, 1)");
}

}  // namespace

GATWithJKImpl::GATWithJKImpl(const GatConfig& config) : config_(config) {
  validate(config_);
  id_embedding_ =
      register_module("id_embedding", torch::nn::Embedding(config_.num_ids, config_.embedding_dim));
  auto convs = register_module("convs", torch::nn::ModuleList());
  auto in = config_.embedding_dim + config_.in_features - 1;
  for (std::int64_t i = 0; i < config_.layers; ++i) {
    nn::GATConvOptions options;
    options.in_channels = in;
    options.out_channels = config_.hidden;
    options.heads = config_.heads;
    options.concat = true;
    convs_.emplace_back(options);
    convs->push_back(convs_.back());
    in = convs_.back()->output_channels();
  }
  const auto jk = config_.layers * config_.hidden * config_.heads;
  head_ = register_module("head", torch::nn::Sequential());
  for (std::int64_t i = 0; i + 1 < config_.fc_layers; ++i) {
    head_->push_back(torch::nn::Linear(jk, jk));
    head_->push_back(torch::nn::ReLU());
    head_->push_back(torch::nn::Dropout(config_.dropout));
  }
  head_->push_back(torch::nn::Linear(jk, config_.num_classes));
}

at::Tensor GATWithJKImpl::forward(const at::Tensor& x, const at::Tensor& edge_index,
                                  const at::Tensor& batch, std::int64_t num_graphs) {
  TORCH_CHECK(x.dim() == 2 && x.size(1) == config_.in_features, "GATWithJK: x must be [N, ",
              config_.in_features, "], got ", x.sizes());
  auto h = embed_ids(id_embedding_, x);
  const bool checkpointed =
      config_.gradient_checkpointing && is_training() && torch::GradMode::is_enabled();
  const double dropout = config_.dropout;
  const bool training = is_training();

  std::vector<at::Tensor> layer_outputs;
  layer_outputs.reserve(convs_.size());
  // One adjacency for every attention layer of the pass (the fused kernel's two edge orders).
  const auto graph = nn::build_attention_graph(edge_index, x.size(0));
  for (auto& conv : convs_) {
    // Captures the conv handle and the graph by value: a checkpointed block runs again during
    // backward.
    nn::CheckpointBlock block = [conv, graph, dropout,
                                 training](const std::vector<at::Tensor>& in) mutable {
      return std::vector<at::Tensor>{
          nn::relu_dropout(conv->forward(in[0], graph), dropout, training)};
    };
    h = checkpointed ? nn::checkpoint(block, {h}, conv->parameters())[0] : block({h})[0];
    layer_outputs.push_back(h);
  }
  auto jumping_knowledge = torch::cat(layer_outputs, 1);
  auto pooled = nn::global_mean_pool(jumping_knowledge, batch, num_graphs);
  return head_->forward(pooled);
}

}  // namespace headroom::models
