#include "fusion_task.hpp"

#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>
#include <cmath>
#include <memory>

#include "headroom/eval/binary_metrics.hpp"
#include "headroom/loader/epoch_order.hpp"

namespace headroom::train {
namespace {

at::Generator epoch_generator(std::uint64_t seed, std::int64_t epoch) {
  return at::make_generator<at::CPUGeneratorImpl>(seed * 1000003ULL +
                                                  static_cast<std::uint64_t>(epoch) + 1);
}

class FusionEpochs final : public OwnEpochs {
 public:
  FusionEpochs(FusionLearner& learner, const FusionFitData& data, std::uint64_t seed)
      : learner_(learner), data_(data), seed_(seed) {}

  const char* unit() const override { return "graph"; }

  OwnEpochPass train_epoch(std::int64_t epoch) override {
    auto generator = epoch_generator(seed_, epoch);
    const at::Tensor order =
        row_order(data_.fit.size(), seed_, epoch, loader::OrderStream::kFusionEpochs);
    const double loss = learner_.train_epoch(data_.fit, order, generator, epoch);
    // The learners do not count their updates: 0 steps (training_task.hpp).
    return {loss, static_cast<std::uint64_t>(data_.fit.size()), 0};
  }

  void save_state(torch::serialize::OutputArchive& archive) const override {
    learner_.save_state(archive);
  }
  void load_state(torch::serialize::InputArchive& archive) override {
    learner_.load_state(archive);
  }

 private:
  FusionLearner& learner_;
  const FusionFitData& data_;
  std::uint64_t seed_;
};

// The held-out rows' class-balanced BCE (what the best epoch minimises) and metrics. A loss that
// is not finite comes back without metrics: the loop stops there, before a NaN score reaches one.
ValidationResult validate_on_holdout(FusionLearner& learner, const FusionFitData& data) {
  const at::Tensor scores = learner.fused_scores(data.holdout);
  ValidationResult result;
  result.loss = balanced_fusion_loss(scores, data.holdout.labels);
  if (!std::isfinite(result.loss)) return result;
  const auto metrics = eval::binary_metrics(data.holdout_labels, to_float_vector(scores));
  result.metrics = {{"f1", metrics.f1},
                    {"precision", metrics.precision},
                    {"recall", metrics.recall},
                    {"roc_auc", metrics.roc_auc}};
  if (const auto w = learner.classifier_weights(data.holdout); w.defined())
    result.metrics["mean_classifier_weight"] = w.mean().item<double>();
  return result;
}

}  // namespace

void train_fusion_in(TrainingTask& task, FusionLearner& learner, const FusionFitData& data,
                     std::uint64_t seed) {
  // The learner owns its network: the task's pointer shares no ownership (an empty owner).
  task.model =
      std::shared_ptr<torch::nn::Module>(std::shared_ptr<torch::nn::Module>(), &learner.model());
  task.own_epochs = std::make_shared<FusionEpochs>(learner, data, seed);
  task.validate = [&learner, &data] { return validate_on_holdout(learner, data); };
}

}  // namespace headroom::train
