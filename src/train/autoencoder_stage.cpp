#include "headroom/train/autoencoder_stage.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <functional>
#include <optional>
#include <stdexcept>

#include "headroom/loader/epoch_order.hpp"
#include "headroom/train/batch_sizing.hpp"
#include "headroom/train/losses.hpp"
#include "headroom/train/model_checkpoint.hpp"
#include "headroom/train/offloaded_teacher.hpp"
#include "headroom/train/teacher_output_cache.hpp"
#include "stage_support.hpp"

namespace headroom::train {

StageResult run_autoencoder_stage(const TrainingConfig& config, const LoopHooks& hooks) {
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
  RunDirectory run(checked_run_directory(config));
  run.log(fmt::format(
      "stage autoencoder: {} VGAE{} on {} normal graphs ({} validation), {} IDs, "
      "device {}, precision {}",
      models::to_string(config.size), config.use_kd ? " with distillation" : "",
      train_normals.size(), validation_normals.size(), ids, config.device, config.precision));

  TrainingTask task;
  task.store = &store;
  task.model = model.ptr();
  task.checkpoint.kind = "vgae";
  task.loss_reduction = LossReduction::kPerNode;
  task.checkpoint.model_config = vgae_config;

  // Distillation: the teacher's latents and reconstructions come from the output cache (no teacher
  // held while training), or from the teacher itself, in device memory or offloaded to pinned
  // host memory.
  models::VGAE teacher{nullptr};
  torch::nn::Linear projection{nullptr};
  std::optional<TeacherOutputCache> teacher_cache;
  std::optional<OffloadedTeacher> offloaded;
  std::function<void()> build_teacher_cache;  // run in `prepare`: a finished run skips it
  if (config.use_kd) {
    const auto teacher_file = resolve_checkpoint_path(config.teacher_path);
    const bool offload = teacher_offload_applies(config, device, run);
    // Loaded in every mode, before the projection: building it draws from the generator, and the
    // projection's initial weights must not depend on the mode.
    teacher = load_vgae_checkpoint(teacher_file,
                                   config.use_teacher_cache || offload ? torch::kCPU : device);
    for (auto& p : teacher->parameters()) p.requires_grad_(false);
    const auto teacher_config = teacher->config();
    projection = torch::nn::Linear(vgae_config.latent, teacher_config.latent);
    task.auxiliary.push_back(projection.ptr());
    if (config.use_teacher_cache) {
      build_teacher_cache = [&, teacher_file, teacher_config] {
        std::vector<std::uint32_t> cached_ids = train_normals;
        cached_ids.insert(cached_ids.end(), validation_normals.begin(), validation_normals.end());
        teacher_cache = detail::cache_teacher_outputs(
            teacher,
            {TeacherRows::kPerNode,
             {{"z", teacher_config.latent}, {"reconstruction", teacher_config.in_features - 1}}},
            cached_ids, config, run, teacher_file, device, store,
            [](models::VGAE& vgae, const loader::GraphBatch& batch) {
              auto out = vgae->forward(batch.x, batch.edge_index);
              return std::vector<at::Tensor>{out.z, out.reconstruction};
            });
      };
    } else if (offload) {
      offloaded.emplace(teacher.ptr(), device);
    }
  }

  // The stage's loss for a VGAE of this configuration (and, distilled, its projection): the
  // trained ones, or a probe's copies.
  auto objective = [&, ids](models::VGAE& vgae, torch::nn::Linear& student_projection,
                            const loader::GraphBatch& batch) -> at::Tensor {
    const auto out = vgae->forward(batch.x, batch.edge_index);
    const auto task_loss = vgae_loss(out, batch, ids).total;
    if (!config.use_kd) return task_loss;
    at::Tensor teacher_z;
    at::Tensor teacher_reconstruction;
    if (teacher_cache) {
      // By the batch's own graph ids: a micro-batch of the OOM guard gets its own rows.
      auto cached = teacher_cache->lookup(batch);
      teacher_z = cached[0];
      teacher_reconstruction = cached[1];
    } else {
      torch::NoGradGuard no_grad;
      std::optional<OffloadedTeacher::DeviceScope> on_device;
      if (offloaded) on_device.emplace(*offloaded);
      auto teacher_out = teacher->forward(batch.x, batch.edge_index);
      teacher_z = teacher_out.z;
      teacher_reconstruction = teacher_out.reconstruction;
    }
    return vgae_distillation_loss(student_projection->forward(out.z), teacher_z, out.reconstruction,
                                  teacher_reconstruction, task_loss, config.kd_alpha);
  };

  // What the memory probe measures: this stage's step on fresh modules.
  const StageStep probed_step{
      [&] {
        models::VGAE fresh(vgae_config);
        torch::nn::Linear fresh_projection{nullptr};
        ProbeSubject subject{{fresh.ptr()}, {}, LossReduction::kPerNode};
        if (projection) {
          fresh_projection = torch::nn::Linear(projection->options);
          subject.modules.push_back(fresh_projection.ptr());
        }
        subject.loss = [&objective, fresh,
                        fresh_projection](const loader::GraphBatch& batch) mutable {
          return objective(fresh, fresh_projection, batch);
        };
        return subject;
      },
      config.use_kd ? "distillation" : "plain", train_normals, "normal training graphs"};

  BatchSizing sizing;
  task.prepare = [&] {
    if (build_teacher_cache) build_teacher_cache();
    // A teacher held on the device during training is outside the step's fit.
    sizing = plan_batch_sizing(config, store, {"vgae", vgae_config}, probed_step, run,
                               teacher && !offloaded ? detail::parameter_bytes(*teacher) : 0.0);
  };
  task.plan_epoch = [&](std::int64_t epoch) {
    EpochPlan plan;
    plan.batches = make_batches(sizing, store, loader::shuffled(train_normals, config.seed, epoch));
    return plan;
  };
  task.loss = [&](const loader::GraphBatch& batch) { return objective(model, projection, batch); };
  task.validate = [&]() {
    ValidationResult result;
    double sum = 0;
    std::int64_t graphs = 0;
    for_each_batch(store, validation_normals, config.eval_batch_size, device,
                   [&](const loader::GraphBatch& batch) {
                     sum += objective(model, projection, batch).item<double>() *
                            static_cast<double>(batch.num_graphs);
                     graphs += batch.num_graphs;
                   });
    result.loss = graphs > 0 ? sum / static_cast<double>(graphs) : 0.0;
    result.metrics = {{"loss", result.loss}, {"graphs", graphs}};
    return result;
  };

  StageResult result;
  result.run_dir = run.path();
  result.outcome = run_training(config, run, task, hooks);
  return result;
}

}  // namespace headroom::train
