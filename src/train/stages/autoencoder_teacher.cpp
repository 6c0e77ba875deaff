#include "autoencoder_teacher.hpp"

#include <torch/torch.h>

#include <utility>

#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/loop/run_resume.hpp"
#include "stage_support.hpp"

namespace headroom::train::detail {

AutoencoderTeacher::AutoencoderTeacher(const TrainingConfig& config, const RunContext& context,
                                       RunDirectory& run, const nlohmann::json& data_identity)
    : config_(config),
      context_(context),
      run_(run),
      file_(resolve_checkpoint_path(config.distillation.teacher_path)) {
  require_teacher_outside(file_, run);
  require_trained_on(file_, data_identity, "to teach this student on");
  const bool offload = teacher_offload_applies(config.distillation, context.device, run);
  auto loaded = load_autoencoder_checkpoint(
      file_, config.distillation.teacher_cache || offload ? torch::kCPU : context.device);
  model_ = loaded.model;
  family_ = loaded.family;
  model_config_ = loaded.info.model_config;
  for (auto& p : model_->parameters()) p.requires_grad_(false);
  if (!config.distillation.teacher_cache && offload) offloaded_.emplace(model_, context.device);
}

std::int64_t AutoencoderTeacher::latent_width() const {
  return family_->latent_width(model_config_);
}

void AutoencoderTeacher::build_cache(std::vector<std::uint32_t> graph_ids,
                                     const store::GraphStore& store) {
  cache_ = cache_teacher_outputs(
      model_,
      {TeacherRows::kPerNode,
       {{"z", family_->latent_width(model_config_)},
        {"reconstruction", family_->reconstruction_width(model_config_)}}},
      graph_ids, config_, run_, file_, context_, store,
      [family = family_](models::GraphAutoencoder& teacher, const loader::GraphBatch& batch) {
        auto encoding = family->encode(*teacher, batch);
        return std::vector<at::Tensor>{encoding.latent, encoding.reconstruction};
      });
}

double AutoencoderTeacher::device_bytes() const {
  return model_ && !offloaded_ ? parameter_bytes(*model_) : 0.0;
}

AutoencoderTeacher::Outputs AutoencoderTeacher::outputs(const loader::GraphBatch& batch) {
  if (cache_) {
    // By the batch's own graph ids: a micro-batch of the OOM guard gets its own rows.
    auto cached = cache_->lookup(batch);
    return {cached[0], cached[1]};
  }
  torch::NoGradGuard no_grad;
  std::optional<OffloadedTeacher::DeviceScope> on_device;
  if (offloaded_) on_device.emplace(*offloaded_);
  auto encoding = family_->encode(*model_, batch);
  return {encoding.latent, encoding.reconstruction};
}

}  // namespace headroom::train::detail
