// GcnClassifier, a graph-convolution classifier (models/gcn_classifier.hpp). Of the overrides it
// reads --hidden, --layers, --embedding-dim and --dropout; it has no static estimate yet (plan
// --mode static says so; the measured plan works as for every family).
#include "headroom/models/gcn_classifier.hpp"
#include "headroom/train/families/model_family.hpp"

namespace headroom::train::families {
namespace {

class GcnFamily final : public ClassifierFamily {
 public:
  std::string_view name() const override { return "gcn"; }
  double default_learning_rate(models::ModelSize size) const override {
    return size == models::ModelSize::kTeacher ? 0.003 : 0.001;
  }
  nlohmann::json resolve_config(const ModelOptions& options,
                                const models::ModelInputs& inputs) const override {
    auto gcn = models::gcn_preset(options.size, inputs.num_ids);
    gcn.in_features = inputs.in_features;
    if (options.hidden) gcn.hidden = *options.hidden;
    if (options.layers) gcn.layers = *options.layers;
    if (options.embedding_dim) gcn.embedding_dim = *options.embedding_dim;
    if (options.dropout) gcn.dropout = *options.dropout;
    return gcn;
  }
  bool reads_option(std::string_view option) const override {
    for (const std::string_view read : {"hidden", "layers", "embedding_dim", "dropout"})
      if (option == read) return true;
    return false;
  }
  models::GraphClassifier build_classifier(const nlohmann::json& model_config) const override {
    return models::GcnClassifier(model_config.get<models::GcnConfig>()).ptr();
  }
  // GcnClassifierImpl: the identity embedding, one GCNConv (weight and bias) per layer, the head.
  double parameter_count(const nlohmann::json& model_config) const override {
    const auto c = model_config.get<models::GcnConfig>();
    const auto d = [](std::int64_t value) { return static_cast<double>(value); };
    double parameters = d(c.num_ids) * d(c.embedding_dim);
    double in = d(c.embedding_dim + c.in_features - 1);
    for (std::int64_t layer = 0; layer < c.layers; ++layer) {
      parameters += in * d(c.hidden) + d(c.hidden);
      in = d(c.hidden);
    }
    return parameters + d(c.hidden) * d(c.num_classes) + d(c.num_classes);
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
