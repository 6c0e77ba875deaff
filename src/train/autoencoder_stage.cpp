#include "headroom/train/autoencoder_stage.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <stdexcept>

#include "headroom/loader/epoch_order.hpp"
#include "headroom/train/batch_sizing.hpp"
#include "headroom/train/losses.hpp"
#include "headroom/train/model_checkpoint.hpp"
#include "stage_support.hpp"

namespace headroom::train {

StageResult run_autoencoder_stage(const TrainingConfig& config) {
  validate(config);
  apply_thread_count(config);
  const auto device = training_device(config);
  const auto store = store::GraphStore::open(config.store);
  const auto ids = detail::num_ids(store);
  const auto train_normals = detail::with_label(store, store.train_ids(), 0);
  auto validation_normals = detail::with_label(store, store.validation_ids(), 0);
  if (train_normals.empty())
    throw std::runtime_error(fmt::format(
        "{}: no normal training graphs to train the autoencoder on", config.store.string()));

  if (validation_normals.empty()) validation_normals = train_normals;  // no held-out normals

  torch::manual_seed(config.seed);  // initial weights are part of the run's determinism
  const auto vgae_config = resolve_vgae_config(config, ids);
  auto model = models::VGAE(vgae_config);
  RunDirectory run(run_directory(config));
  run.log(fmt::format(
      "stage autoencoder: {} VGAE{} on {} normal graphs ({} validation), {} IDs, "
      "device {}, precision {}",
      models::to_string(config.size), config.use_kd ? " with distillation" : "",
      train_normals.size(), validation_normals.size(), ids, config.device, config.precision));

  TrainingTask task;
  task.store = &store;
  task.model = model.ptr();
  task.checkpoint.kind = models::ModelKind::kVgae;
  task.loss_reduction = LossReduction::kPerNode;
  task.checkpoint.model_config = vgae_config;

  models::VGAE teacher{nullptr};
  torch::nn::Linear projection{nullptr};
  if (config.use_kd) {
    teacher = load_vgae_checkpoint(resolve_checkpoint_path(config.teacher_path), device);
    for (auto& p : teacher->parameters()) p.requires_grad_(false);
    projection = torch::nn::Linear(vgae_config.latent, teacher->config().latent);
    task.auxiliary.push_back(projection.ptr());
  }

  auto objective = [&, ids](const loader::GraphBatch& batch, bool training) -> at::Tensor {
    const auto out = model->forward(batch.x, batch.edge_index);
    const auto task_loss = vgae_loss(out, batch, ids).total;
    if (!config.use_kd) return task_loss;
    models::VgaeOutput teacher_out;
    {
      torch::NoGradGuard no_grad;
      teacher_out = teacher->forward(batch.x, batch.edge_index);
    }
    (void)training;
    return vgae_distillation_loss(projection->forward(out.z), teacher_out.z, out.reconstruction,
                                  teacher_out.reconstruction, task_loss, config.kd_alpha);
  };

  const auto sizing = plan_batch_sizing(config, store, vgae_config, run);
  task.plan_epoch = [&](std::int64_t epoch) {
    EpochPlan plan;
    plan.batches = make_batches(sizing, store, loader::shuffled(train_normals, config.seed, epoch));
    return plan;
  };
  task.loss = [&](const loader::GraphBatch& batch) { return objective(batch, true); };
  task.validate = [&]() {
    ValidationResult result;
    double sum = 0;
    std::int64_t graphs = 0;
    for_each_batch(store, validation_normals, config.eval_batch_size, device,
                   [&](const loader::GraphBatch& batch) {
                     sum += objective(batch, false).item<double>() *
                            static_cast<double>(batch.num_graphs);
                     graphs += batch.num_graphs;
                   });
    result.loss = graphs > 0 ? sum / static_cast<double>(graphs) : 0.0;
    result.metrics = {{"loss", result.loss}, {"graphs", graphs}};
    return result;
  };

  StageResult result;
  result.run_dir = run.path();
  result.outcome = run_training(config, run, task);
  return result;
}

}  // namespace headroom::train
