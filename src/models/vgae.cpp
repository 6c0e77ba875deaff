#include "headroom/models/vgae.hpp"

#include <torch/torch.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "headroom/models/id_embedding.hpp"
#include "headroom/models/vgae_layout.hpp"
#include "headroom/nn/attention_graph.hpp"
#include "headroom/nn/checkpoint.hpp"
#include "headroom/nn/relu_dropout.hpp"

namespace headroom::models {
namespace {

void require_dropout(double dropout) {
  if (!(dropout >= 0.0 && dropout < 1.0))
    throw std::invalid_argument("VGAE: dropout must be in [0, 1)");
}

void require_logvar_clamp(double clamp) {
  if (!(clamp > 0.0)) throw std::invalid_argument("VGAE: logvar_clamp must be positive");
}

nn::GATConv make_conv(const GatLayerShape& shape) {
  nn::GATConvOptions options;
  options.in_channels = shape.in;
  options.out_channels = shape.channels;
  options.heads = shape.heads;
  options.concat = true;
  return nn::GATConv(options);
}

// The neighbourhood MLP: Linear + ReLU (+ dropout) per hidden width, then Linear to num_ids.
// Mirrored-layout checkpoints name its layers 0 and 2: the dropout modules appear only in the
// kd-gat layout.
torch::nn::Sequential neighbour_mlp(const VgaeLayerPlan& plan, const VgaeConfig& config) {
  torch::nn::Sequential mlp;
  auto in = config.latent;
  for (const auto width : plan.neighbour) {
    mlp->push_back(torch::nn::Linear(in, width));
    mlp->push_back(torch::nn::ReLU());
    if (plan.neighbour_dropout) mlp->push_back(torch::nn::Dropout(config.dropout));
    in = width;
  }
  mlp->push_back(torch::nn::Linear(in, config.num_ids));
  return mlp;
}

// GATConv -> BatchNorm -> ReLU -> dropout, checkpointed when asked.
//
// BatchNorm and recomputation: a checkpointed block runs twice, and a second BatchNorm forward
// would fold the same batch into the running statistics again. The recomputation therefore calls
// at::batch_norm with the batch statistics and no running buffers: in training mode BatchNorm
// normalises with the batch statistics whatever the running ones hold, so its output and
// gradients are the same, and the buffers see each batch exactly once. (Setting momentum to 0
// would still count the batch in num_batches_tracked.)
at::Tensor gat_block(nn::GATConv& conv, torch::nn::BatchNorm1d& norm, const at::Tensor& x,
                     const nn::AttentionGraph& graph, double dropout, bool training,
                     bool checkpointed) {
  auto first_pass = std::make_shared<bool>(true);
  // The graph is captured by value (shared tensors): the recomputation walks the same one.
  nn::CheckpointBlock block = [conv, norm, graph, dropout, training,
                               first_pass](const std::vector<at::Tensor>& in) mutable {
    auto h = conv->forward(in[0], graph);
    if (std::exchange(*first_pass, false) || !training) {
      h = norm->forward(h);
    } else {
      const auto& options = norm->options;
      h = torch::batch_norm(h, norm->weight, norm->bias, /*running_mean=*/{}, /*running_var=*/{},
                            /*training=*/true, /*momentum=*/0.0, options.eps(),
                            at::globalContext().userEnabledCuDNN());
    }
    return std::vector<at::Tensor>{nn::relu_dropout(h, dropout, training)};
  };
  if (!checkpointed) return block({x})[0];
  auto parameters = conv->parameters();
  for (const auto& p : norm->parameters()) parameters.push_back(p);
  return nn::checkpoint(block, {x}, parameters)[0];
}

}  // namespace

VGAEImpl::VGAEImpl(const VgaeConfig& config) : config_(config) {
  require_dropout(config_.dropout);
  require_logvar_clamp(config_.logvar_clamp);
  const auto plan = vgae_layer_plan(config_);
  id_embedding_ =
      register_module("id_embedding", torch::nn::Embedding(config_.num_ids, config_.embedding_dim));

  auto encoder = register_module("encoder", torch::nn::ModuleList());
  auto encoder_norms = register_module("encoder_norms", torch::nn::ModuleList());
  for (const auto& shape : plan.encoder) {
    encoder_.push_back(make_conv(shape));
    encoder_norms_.emplace_back(shape.out());
    encoder->push_back(encoder_.back());
    encoder_norms->push_back(encoder_norms_.back());
  }
  mu_ = register_module("mu", torch::nn::Linear(plan.encoded, config_.latent));
  logvar_ = register_module("logvar", torch::nn::Linear(plan.encoded, config_.latent));

  auto decoder = register_module("decoder", torch::nn::ModuleList());
  auto decoder_norms = register_module("decoder_norms", torch::nn::ModuleList());
  for (const auto& shape : plan.decoder) {
    decoder_.push_back(make_conv(shape));
    decoder_norms_.emplace_back(shape.out());
    decoder->push_back(decoder_.back());
    decoder_norms->push_back(decoder_norms_.back());
  }
  decoder_.push_back(make_conv(plan.reconstruction));
  decoder->push_back(decoder_.back());

  id_classifier_ =
      register_module("id_classifier", torch::nn::Linear(config_.latent, config_.num_ids));
  neighbour_decoder_ = register_module("neighbour_decoder", neighbour_mlp(plan, config_));
}

VgaeOutput VGAEImpl::forward(const at::Tensor& x, const at::Tensor& edge_index) {
  TORCH_CHECK(x.dim() == 2 && x.size(1) == config_.in_features, "VGAE: x must be [N, ",
              config_.in_features, "], got ", x.sizes());
  const bool training = is_training();
  const bool checkpointed =
      config_.gradient_checkpointing && training && torch::GradMode::is_enabled();
  const double dropout = config_.dropout;

  // One adjacency for every attention layer of the pass (the fused kernel's two edge orders).
  const auto graph = nn::build_attention_graph(edge_index, x.size(0));
  auto h = embed_ids(id_embedding_, x);
  for (std::size_t i = 0; i < encoder_.size(); ++i) {
    h = gat_block(encoder_[i], encoder_norms_[i], h, graph, dropout, training, checkpointed);
  }

  VgaeOutput out;
  out.mu = mu_(h);
  out.logvar = logvar_(h).clamp(-config_.logvar_clamp, config_.logvar_clamp);
  out.z = training ? out.mu + torch::randn_like(out.mu) * torch::exp(0.5 * out.logvar) : out.mu;

  auto d = out.z;
  for (std::size_t i = 0; i < decoder_norms_.size(); ++i) {
    d = gat_block(decoder_[i], decoder_norms_[i], d, graph, dropout, training, checkpointed);
  }
  out.reconstruction = torch::sigmoid(decoder_.back()->forward(d, graph));
  out.id_logits = id_classifier_(out.z);
  out.neighbour_logits = neighbour_decoder_->forward(out.z);
  return out;
}

}  // namespace headroom::models
