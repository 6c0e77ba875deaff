#include "headroom/models/vgae.hpp"

#include <torch/torch.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "headroom/models/id_embedding.hpp"
#include "headroom/nn/checkpoint.hpp"

namespace headroom::models {
namespace {

void validate(const VgaeConfig& config) {
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("VGAE: " + what);
  };
  require(config.num_ids > 0, "num_ids must be positive");
  require(config.in_features >= 2, "in_features must be at least 2 (the ID column and features)");
  require(config.embedding_dim > 0, "embedding_dim must be positive");
  require(!config.hidden.empty(), "hidden must name at least one layer");
  require(config.latent > 0 && config.heads > 0, "latent and heads must be positive");
  require(config.dropout >= 0.0 && config.dropout < 1.0, "dropout must be in [0, 1)");
  require(config.logvar_clamp > 0.0, "logvar_clamp must be positive");
  for (auto width : config.hidden) {
    if (width <= 0 || width % config.heads != 0) {
      throw std::invalid_argument("VGAE: hidden width " + std::to_string(width) +
                                  " must be a positive multiple of heads (" +
                                  std::to_string(config.heads) + ")");
    }
  }
}

nn::GATConv make_conv(std::int64_t in, std::int64_t out_total, std::int64_t heads) {
  nn::GATConvOptions options;
  options.in_channels = in;
  options.out_channels = out_total / heads;
  options.heads = heads;
  options.concat = true;
  return nn::GATConv(options);
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
                     const at::Tensor& edge_index, double dropout, bool training,
                     bool checkpointed) {
  auto first_pass = std::make_shared<bool>(true);
  nn::CheckpointBlock block = [conv, norm, dropout, training,
                               first_pass](const std::vector<at::Tensor>& in) mutable {
    auto h = conv->forward(in[0], in[1]);
    if (std::exchange(*first_pass, false) || !training) {
      h = norm->forward(h);
    } else {
      const auto& options = norm->options;
      h = torch::batch_norm(h, norm->weight, norm->bias, /*running_mean=*/{}, /*running_var=*/{},
                            /*training=*/true, /*momentum=*/0.0, options.eps(),
                            at::globalContext().userEnabledCuDNN());
    }
    return std::vector<at::Tensor>{torch::dropout(torch::relu(h), dropout, training)};
  };
  if (!checkpointed) return block({x, edge_index})[0];
  auto parameters = conv->parameters();
  for (const auto& p : norm->parameters()) parameters.push_back(p);
  return nn::checkpoint(block, {x, edge_index}, parameters)[0];
}

}  // namespace

VGAEImpl::VGAEImpl(const VgaeConfig& config) : config_(config) {
  validate(config_);
  const auto heads = config_.heads;
  id_embedding_ =
      register_module("id_embedding", torch::nn::Embedding(config_.num_ids, config_.embedding_dim));

  auto encoder = register_module("encoder", torch::nn::ModuleList());
  auto encoder_norms = register_module("encoder_norms", torch::nn::ModuleList());
  auto in = config_.embedding_dim + config_.in_features - 1;
  for (auto width : config_.hidden) {
    encoder_.push_back(make_conv(in, width, heads));
    encoder_norms_.emplace_back(width);
    encoder->push_back(encoder_.back());
    encoder_norms->push_back(encoder_norms_.back());
    in = width;
  }
  mu_ = register_module("mu", torch::nn::Linear(in, config_.latent));
  logvar_ = register_module("logvar", torch::nn::Linear(in, config_.latent));

  // The decoder mirrors the encoder from the latent back up: latent -> hidden[n-2] -> ... ->
  // hidden[0], then one single-head GATConv to the reconstructed features.
  auto decoder = register_module("decoder", torch::nn::ModuleList());
  auto decoder_norms = register_module("decoder_norms", torch::nn::ModuleList());
  in = config_.latent;
  for (auto i = static_cast<std::int64_t>(config_.hidden.size()) - 2; i >= 0; --i) {
    const auto width = config_.hidden[static_cast<std::size_t>(i)];
    decoder_.push_back(make_conv(in, width, heads));
    decoder_norms_.emplace_back(width);
    decoder->push_back(decoder_.back());
    decoder_norms->push_back(decoder_norms_.back());
    in = width;
  }
  decoder_.push_back(make_conv(in, config_.in_features - 1, 1));
  decoder->push_back(decoder_.back());

  id_classifier_ =
      register_module("id_classifier", torch::nn::Linear(config_.latent, config_.num_ids));
  const auto last = config_.hidden.back();
  neighbour_decoder_ = register_module(
      "neighbour_decoder",
      torch::nn::Sequential(torch::nn::Linear(config_.latent, last), torch::nn::ReLU(),
                            torch::nn::Linear(last, config_.num_ids)));
}

VgaeOutput VGAEImpl::forward(const at::Tensor& x, const at::Tensor& edge_index) {
  TORCH_CHECK(x.dim() == 2 && x.size(1) == config_.in_features, "VGAE: x must be [N, ",
              config_.in_features, "], got ", x.sizes());
  const bool training = is_training();
  const bool checkpointed =
      config_.gradient_checkpointing && training && torch::GradMode::is_enabled();
  const double dropout = config_.dropout;

  auto h = embed_ids(id_embedding_, x);
  for (std::size_t i = 0; i < encoder_.size(); ++i) {
    h = gat_block(encoder_[i], encoder_norms_[i], h, edge_index, dropout, training, checkpointed);
  }

  VgaeOutput out;
  out.mu = mu_(h);
  out.logvar = logvar_(h).clamp(-config_.logvar_clamp, config_.logvar_clamp);
  out.z = training ? out.mu + torch::randn_like(out.mu) * torch::exp(0.5 * out.logvar) : out.mu;

  auto d = out.z;
  for (std::size_t i = 0; i < decoder_norms_.size(); ++i) {
    d = gat_block(decoder_[i], decoder_norms_[i], d, edge_index, dropout, training, checkpointed);
  }
  out.reconstruction = torch::sigmoid(decoder_.back()->forward(d, edge_index));
  out.id_logits = id_classifier_(out.z);
  out.neighbour_logits = neighbour_decoder_->forward(out.z);
  return out;
}

}  // namespace headroom::models
