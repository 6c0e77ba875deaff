// GATWithJK, the KD-GAT classifier (models/gat_with_jk.hpp).
#include "headroom/memory/static_peak_estimate.hpp"
#include "headroom/models/gat_with_jk.hpp"
#include "headroom/train/families/model_family.hpp"

namespace headroom::train {

models::GatConfig resolve_gat_config(const ModelOptions& options,
                                     const models::ModelInputs& inputs) {
  auto gat = models::gat_preset(options.size, inputs.num_ids);
  gat.in_features = inputs.in_features;
  if (options.hidden) gat.hidden = *options.hidden;
  if (options.layers) gat.layers = *options.layers;
  if (options.heads) gat.heads = *options.heads;
  if (options.embedding_dim) gat.embedding_dim = *options.embedding_dim;
  if (options.fc_layers) gat.fc_layers = *options.fc_layers;
  if (options.dropout) gat.dropout = *options.dropout;
  gat.gradient_checkpointing = options.checkpointing_until_chosen();
  return gat;
}

}  // namespace headroom::train

namespace headroom::train::families {
namespace {

class GatFamily final : public ClassifierFamily {
 public:
  std::string_view name() const override { return "gat"; }
  double default_learning_rate(models::ModelSize size) const override {
    return size == models::ModelSize::kTeacher ? 0.003 : 0.001;
  }
  nlohmann::json resolve_config(const ModelOptions& options,
                                const models::ModelInputs& inputs) const override {
    return resolve_gat_config(options, inputs);
  }
  bool reads_option(std::string_view option) const override {
    for (const std::string_view read : {"hidden", "layers", "heads", "embedding_dim", "fc_layers",
                                        "dropout", "gradient_checkpointing"})
      if (option == read) return true;
    return false;
  }
  models::GraphClassifier build_classifier(const nlohmann::json& model_config) const override {
    return models::GATWithJK(model_config.get<models::GatConfig>()).ptr();
  }
  double parameter_count(const nlohmann::json& model_config) const override {
    return memory::model_parameter_count(model_config.get<models::GatConfig>());
  }
  std::optional<memory::PeakFit> static_estimate(const nlohmann::json& model_config,
                                                 bool reduced_precision) const override {
    return memory::static_peak_estimate(model_config.get<models::GatConfig>(), reduced_precision);
  }
};

}  // namespace

const ModelFamily& gat_family() {
  static const GatFamily family;
  return family;
}

}  // namespace headroom::train::families
