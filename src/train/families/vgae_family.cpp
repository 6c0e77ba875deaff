// The VGAE autoencoder (models/vgae.hpp): trained by the autoencoder stage, it scores the
// curriculum's difficulty. Its loss is train::vgae_loss, averaged per node.
#include <torch/torch.h>

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

class VgaeFamily final : public ModelFamily {
 public:
  std::string_view name() const override { return "vgae"; }
  FamilyRole role() const override { return FamilyRole::kAutoencoder; }
  double default_learning_rate(models::ModelSize) const override { return 0.002; }
  nlohmann::json resolve_config(const ModelOptions& options,
                                const models::ModelInputs& inputs) const override {
    return resolve_vgae_config(options, inputs);
  }
  std::shared_ptr<torch::nn::Module> build(const nlohmann::json& model_config) const override {
    return models::VGAE(model_config.get<models::VgaeConfig>()).ptr();
  }
  ProbeSubject plain_subject(const nlohmann::json& model_config) const override {
    const auto config = model_config.get<models::VgaeConfig>();
    models::VGAE model(config);
    return ProbeSubject{
        {model.ptr()},
        [model, num_ids = config.num_ids,
         weights = vgae_loss_weights(config)](const loader::GraphBatch& batch) mutable {
          return vgae_loss(model->forward(batch.x, batch.edge_index), batch, num_ids, weights)
              .total;
        },
        LossReduction::kPerNode};
  }
  std::optional<memory::PeakFit> static_estimate(const nlohmann::json& model_config,
                                                 bool reduced_precision) const override {
    return memory::static_peak_estimate(model_config.get<models::VgaeConfig>(), reduced_precision);
  }
};

}  // namespace

const ModelFamily& vgae_family() {
  static const VgaeFamily family;
  return family;
}

}  // namespace headroom::train::families
