// GcnClassifier, a graph-convolution classifier (models/gcn_classifier.hpp). Of the overrides it
// reads --hidden, --layers, --embedding-dim and --dropout; it has no static estimate yet (plan
// --mode static says so; the measured plan works as for every family).
#include "headroom/models/gcn_classifier.hpp"
#include "headroom/train/model_family.hpp"

namespace headroom::train::families {
namespace {

class GcnFamily final : public ClassifierFamily {
 public:
  std::string_view name() const override { return "gcn"; }
  double default_learning_rate(models::ModelSize size) const override {
    return size == models::ModelSize::kTeacher ? 0.003 : 0.001;
  }
  nlohmann::json resolve_config(const TrainingConfig& config, std::int64_t num_ids) const override {
    auto gcn = models::gcn_preset(config.size, num_ids);
    if (config.hidden) gcn.hidden = *config.hidden;
    if (config.layers) gcn.layers = *config.layers;
    if (config.embedding_dim) gcn.embedding_dim = *config.embedding_dim;
    if (config.dropout) gcn.dropout = *config.dropout;
    return gcn;
  }
  models::GraphClassifier build_classifier(const nlohmann::json& model_config) const override {
    return models::GcnClassifier(model_config.get<models::GcnConfig>()).ptr();
  }
  std::optional<memory::PeakFit> static_estimate(const nlohmann::json&, bool) const override {
    return std::nullopt;
  }
};

}  // namespace

const ModelFamily& gcn_family() {
  static const GcnFamily family;
  return family;
}

}  // namespace headroom::train::families
