// The VGAE autoencoder (models/vgae.hpp), the first autoencoder family: trained by the autoencoder
// stage, it scores the curriculum's difficulty and is a detector of its own. Its loss is
// train::vgae_loss, averaged per node; its anomaly score train::graph_reconstruction_score.
#include <torch/torch.h>

#include <stdexcept>

#include "headroom/memory/static_peak_estimate.hpp"
#include "headroom/models/vgae.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/step/losses.hpp"

namespace headroom::train {

models::VgaeConfig resolve_vgae_config(const ModelOptions& options,
                                       const models::ModelInputs& inputs) {
  auto vgae = models::vgae_preset(options.size, inputs.num_ids);
  vgae.in_features = inputs.in_features;
  vgae.layout = models::parse_vgae_layout(options.vgae_layout);
  if (vgae.layout == models::VgaeLayout::kMirrored) {
    vgae.hidden.push_back(vgae.latent);  // headroom's first presets: {480, 240, 48}, {80, 40, 16}
    vgae.decoder_heads = vgae.heads;
  }
  if (!options.vgae_hidden.empty()) vgae.hidden = options.vgae_hidden;
  if (options.latent) vgae.latent = *options.latent;
  if (options.heads) vgae.heads = *options.heads;
  if (options.embedding_dim) vgae.embedding_dim = *options.embedding_dim;
  if (options.dropout) vgae.dropout = *options.dropout;
  vgae.gradient_checkpointing = options.checkpointing_until_chosen();
  return vgae;
}

}  // namespace headroom::train

namespace headroom::train::families {
namespace {

models::VGAEImpl& as_vgae(models::GraphAutoencoderImpl& model) {
  auto* vgae = dynamic_cast<models::VGAEImpl*>(&model);
  if (vgae == nullptr) throw std::invalid_argument("the vgae family was handed another model");
  return *vgae;
}

class VgaeFamily final : public AutoencoderFamily {
 public:
  std::string_view name() const override { return "vgae"; }
  double default_learning_rate(models::ModelSize) const override { return 0.002; }
  nlohmann::json resolve_config(const ModelOptions& options,
                                const models::ModelInputs& inputs) const override {
    return resolve_vgae_config(options, inputs);
  }
  bool reads_option(std::string_view option) const override {
    for (const std::string_view read : {"latent", "vgae_hidden", "vgae_layout", "heads",
                                        "embedding_dim", "dropout", "gradient_checkpointing"})
      if (option == read) return true;
    return false;
  }
  models::GraphAutoencoder build_autoencoder(const nlohmann::json& model_config) const override {
    return models::VGAE(model_config.get<models::VgaeConfig>()).ptr();
  }
  double parameter_count(const nlohmann::json& model_config) const override {
    return memory::model_parameter_count(model_config.get<models::VgaeConfig>());
  }
  std::optional<memory::PeakFit> static_estimate(const nlohmann::json& model_config,
                                                 bool reduced_precision) const override {
    return memory::static_peak_estimate(model_config.get<models::VgaeConfig>(), reduced_precision);
  }

  // vgae_loss, with the weights of the model's layout.
  AutoencoderPass training_pass(models::GraphAutoencoderImpl& model,
                                const loader::GraphBatch& batch) const override {
    auto& vgae = as_vgae(model);
    const auto out = vgae.forward(batch.x, batch.edge_index);
    const auto& config = vgae.config();
    return {vgae_loss(out, batch, config.num_ids, vgae_loss_weights(config)).total,
            {out.z, out.reconstruction}};
  }
  AutoencoderEncoding encode(models::GraphAutoencoderImpl& model,
                             const loader::GraphBatch& batch) const override {
    const auto out = as_vgae(model).forward(batch.x, batch.edge_index);
    return {out.z, out.reconstruction};
  }
  // graph_reconstruction_score: the curriculum's difficulty and the detector's anomaly score.
  at::Tensor graph_scores(models::GraphAutoencoderImpl& model,
                          const loader::GraphBatch& batch) const override {
    return graph_reconstruction_score(as_vgae(model).forward(batch.x, batch.edge_index), batch);
  }
  AutoencoderEvidence evidence(models::GraphAutoencoderImpl& model,
                               const loader::GraphBatch& batch) const override {
    auto& vgae = as_vgae(model);
    const auto out = vgae.forward(batch.x, batch.edge_index);
    const at::Tensor ids = node_id_classes(batch.x);
    const at::Tensor mu = out.mu.to(at::kFloat);
    const at::Tensor logvar = out.logvar.to(at::kFloat);
    return {
        .graph_score = graph_reconstruction_score(out, batch).to(at::kFloat),
        .feature_error =
            (out.reconstruction.to(at::kFloat) - batch.x.slice(1, 1).to(at::kFloat)).pow(2).mean(1),
        .identity_error =
            at::cross_entropy_loss(out.id_logits.to(at::kFloat), ids, {}, at::Reduction::None),
        .neighbour_error =
            at::binary_cross_entropy_with_logits(
                out.neighbour_logits.to(at::kFloat),
                neighbourhood_targets(batch.x, batch.edge_index, vgae.config().num_ids), {}, {},
                at::Reduction::None)
                .mean(1),
        .latent_divergence = (-0.5 * (1 + logvar - mu.pow(2) - logvar.exp())).mean(1),
    };
  }
  std::int64_t latent_width(const nlohmann::json& model_config) const override {
    return model_config.get<models::VgaeConfig>().latent;
  }
  // Node features 1.. (feature 0, the identity, is predicted by the identity classifier instead).
  std::int64_t reconstruction_width(const nlohmann::json& model_config) const override {
    return model_config.get<models::VgaeConfig>().in_features - 1;
  }
};

}  // namespace

const ModelFamily& vgae_family() {
  static const VgaeFamily family;
  return family;
}

}  // namespace headroom::train::families
