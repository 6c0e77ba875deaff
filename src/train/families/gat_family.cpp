// GATWithJK, the KD-GAT classifier (models/gat_with_jk.hpp).
#include "headroom/memory/static_peak_estimate.hpp"
#include "headroom/models/gat_with_jk.hpp"
#include "headroom/train/model_family.hpp"

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
  models::GraphClassifier build_classifier(const nlohmann::json& model_config) const override {
    return models::GATWithJK(model_config.get<models::GatConfig>()).ptr();
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
