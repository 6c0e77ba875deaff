#include "autoencoder_task.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <stdexcept>

#include "headroom/loader/epoch_order.hpp"
#include "headroom/train/batches/sharded_pass.hpp"
#include "headroom/train/step/graph_task_batch.hpp"
#include "headroom/train/step/losses.hpp"
#include "stage_preconditions.hpp"
#include "stage_support.hpp"

namespace headroom::train::detail {

AutoencoderTask::AutoencoderTask(const TrainingConfig& config)
    : config_(config),
      store_(store::GraphStore::open(config.run.store)),
      context_(resolve_run_context(config, store_, CommandWork::kTraining)),
      inputs_(model_inputs(store_)),
      train_normals_(with_label(store_, store_.train_ids(), 0)),
      validation_normals_(with_label(store_, store_.validation_ids(), 0)),
      family_(autoencoder_family(config.model.family)) {
  if (train_normals_.empty())
    throw std::runtime_error(fmt::format(
        "{}: no normal training graphs to train the autoencoder on", config.run.store.string()));
  require_validation_graphs(store_, validation_normals_.size(), "autoencoder",
                            "normal validation graphs");
  model_config_ = seeded_model_config(family_, config, inputs_, context_, "autoencoder");
  model_ = family_.build_autoencoder(model_config_);
}

void AutoencoderTask::open(RunDirectory& run) {
  run_ = &run;
  run.log(fmt::format(
      "stage autoencoder: {} {}{} on {} normal graphs ({} validation), {} identities, {} "
      "node features, device {}, precision {}",
      models::to_string(config_.model.size), family_.name(),
      config_.distillation.enabled ? " with distillation" : "", train_normals_.size(),
      validation_normals_.size(), inputs_.num_ids, inputs_.in_features, config_.run.device,
      config_.run.precision));
  if (!config_.distillation.enabled) return;
  teacher_.emplace(config_, context_, run, store::content_identity(store_.metadata()));
  projection_ = torch::nn::Linear(family_.latent_width(model_config_), teacher_->latent_width());
}

TrainingTask& AutoencoderTask::training() {
  fill_graph_training(training_, *this, store_, model_, [this] { prepare(); });
  training_.loss_reduction = LossReduction::kPerNode;
  if (projection_) training_.auxiliary.push_back(projection_.ptr());
  training_.plan_epoch = [this](std::int64_t epoch) {
    EpochPlan plan;
    plan.batches =
        make_batches(sizing_, store_, loader::shuffled(train_normals_, config_.run.seed, epoch));
    return plan;
  };
  training_.loss = graph_task_loss(
      [this](const loader::GraphBatch& batch) { return objective(*model_, projection_, batch); });
  training_.validate = [this] { return validate(); };
  return training_;
}

// Only when there is training to do: the step's inputs, then its memory fit. A teacher held on
// the device during training is outside the step's fit.
void AutoencoderTask::prepare() {
  prepare_inputs();
  sizing_ =
      plan_graph_step(*this, config_, store_, *run_, teacher_ ? teacher_->device_bytes() : 0.0);
}

void AutoencoderTask::prepare_inputs() {
  if (teacher_ && config_.distillation.teacher_cache)
    teacher_->build_cache(teacher_cache_ids(train_normals_, validation_normals_), store_);
}

ModelSpec AutoencoderTask::model_spec() const {
  return {std::string(family_.name()), model_config_};
}

ProbeTarget AutoencoderTask::probe_target() {
  return {[this] {
            auto fresh = family_.build_autoencoder(model_config_);
            torch::nn::Linear fresh_projection{nullptr};
            ProbeSubject subject{{fresh}, {}, LossReduction::kPerNode};
            if (projection_) {
              fresh_projection = torch::nn::Linear(projection_->options);
              subject.modules.push_back(fresh_projection.ptr());
            }
            subject.loss = [this, fresh,
                            fresh_projection](const loader::GraphBatch& batch) mutable {
              return objective(*fresh, fresh_projection, batch);
            };
            return subject;
          },
          config_.distillation.enabled ? "distillation" : "plain", train_normals_,
          "normal training graphs"};
}

void AutoencoderTask::set_checkpointing(bool on) {
  model_config_["gradient_checkpointing"] = on;
  model_->set_gradient_checkpointing(on);
}

// The stage's loss for a model of this configuration (and, distilled, its projection): the
// trained ones, or a probe's copies.
at::Tensor AutoencoderTask::objective(models::GraphAutoencoderImpl& model,
                                      torch::nn::Linear& student_projection,
                                      const loader::GraphBatch& batch) {
  const auto pass = family_.training_pass(model, batch);
  if (!teacher_) return pass.loss;
  const auto teacher = teacher_->outputs(batch);
  return vgae_distillation_loss(student_projection->forward(pass.encoding.latent), teacher.latent,
                                pass.encoding.reconstruction, teacher.reconstruction, pass.loss,
                                config_.distillation.alpha);
}

// The mean loss over the normal validation graphs, sharded over the ranks and folded in batch
// order (train/batches/sharded_pass.hpp).
ValidationResult AutoencoderTask::validate() {
  const auto contributions = contributions_across_ranks(
      store_, validation_normals_, inference_limits(config_, context_), validation_batches_,
      context_.device, [&](const loader::GraphBatch& batch) {
        const auto n = static_cast<double>(batch.num_graphs);
        return BatchContribution{objective(*model_, projection_, batch).item<double>() * n, n};
      });
  double sum = 0;
  std::int64_t graphs = 0;
  for (const auto& c : contributions) {
    sum += c[0];
    graphs += static_cast<std::int64_t>(c[1]);
  }
  ValidationResult result;
  result.loss = graphs > 0 ? sum / static_cast<double>(graphs) : 0.0;
  result.metrics = {{"loss", result.loss}, {"graphs", graphs}};
  return result;
}

}  // namespace headroom::train::detail
