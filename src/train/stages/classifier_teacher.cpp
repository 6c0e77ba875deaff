#include "classifier_teacher.hpp"

#include <torch/torch.h>

#include <utility>

#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/loop/run_resume.hpp"
#include "stage_support.hpp"

namespace headroom::train::detail {

ClassifierTeacher::ClassifierTeacher(const TrainingConfig& config, const RunContext& context,
                                     RunDirectory& run, const nlohmann::json& data_identity)
    : config_(config),
      context_(context),
      run_(run),
      file_(resolve_checkpoint_path(config.distillation.teacher_path)) {
  require_teacher_outside(file_, run);
  require_trained_on(file_, data_identity, "to teach this student on");
  const bool offload = teacher_offload_applies(config.distillation, context.device, run);
  CheckpointInfo info;
  model_ = load_classifier_checkpoint(
      file_, config.distillation.teacher_cache || offload ? torch::kCPU : context.device, &info);
  classes_ = info.model_config.at("num_classes").get<std::int64_t>();
  for (auto& p : model_->parameters()) p.requires_grad_(false);
  if (!config.distillation.teacher_cache && offload) offloaded_.emplace(model_, context.device);
}

void ClassifierTeacher::build_cache(std::vector<std::uint32_t> graph_ids,
                                    const store::GraphStore& store) {
  cache_ = cache_teacher_outputs(
      model_, {TeacherRows::kPerGraph, {{"logits", classes_}}}, graph_ids, config_, run_, file_,
      context_, store, [](models::GraphClassifier& classifier, const loader::GraphBatch& batch) {
        return std::vector<at::Tensor>{
            classifier->forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs)};
      });
}

double ClassifierTeacher::device_bytes() const {
  return model_ && !offloaded_ ? parameter_bytes(*model_) : 0.0;
}

at::Tensor ClassifierTeacher::logits(const loader::GraphBatch& batch) {
  if (cache_) return cache_->lookup(batch)[0];
  torch::NoGradGuard no_grad;
  std::optional<OffloadedTeacher::DeviceScope> on_device;
  if (offloaded_) on_device.emplace(*offloaded_);
  return model_->forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs);
}

}  // namespace headroom::train::detail
