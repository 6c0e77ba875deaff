#include "headroom/train/classifier_stage.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <functional>
#include <optional>
#include <stdexcept>

#include "headroom/eval/binary_metrics.hpp"
#include "headroom/loader/epoch_order.hpp"
#include "headroom/train/batch_sizing.hpp"
#include "headroom/train/curriculum.hpp"
#include "headroom/train/graph_scores.hpp"
#include "headroom/train/losses.hpp"
#include "headroom/train/model_checkpoint.hpp"
#include "headroom/train/model_family.hpp"
#include "headroom/train/offloaded_teacher.hpp"
#include "headroom/train/teacher_output_cache.hpp"
#include "stage_support.hpp"

namespace headroom::train {
namespace {

// The VGAE that scores difficulty: --autoencoder-path, else this size's autoencoder run (the
// distilled one first).
std::filesystem::path autoencoder_for(const TrainingConfig& config) {
  if (!config.autoencoder_path.empty()) return resolve_checkpoint_path(config.autoencoder_path);
  TrainingConfig vgae = config;
  vgae.stage = Stage::kAutoencoder;
  vgae.model = "vgae";
  for (const bool kd : {true, false}) {
    vgae.use_kd = kd;
    const auto best = run_directory(vgae) / "best.pt";
    if (std::filesystem::exists(best)) return best;
  }
  vgae.use_kd = false;
  throw std::runtime_error(fmt::format(
      "stage curriculum needs a trained VGAE: none in {} (run `headroom autoencoder` first, or "
      "pass --autoencoder-path)",
      run_directory(vgae).string()));
}

}  // namespace

StageResult run_classifier_stage(const TrainingConfig& config, const LoopHooks& hooks) {
  validate(config);
  apply_thread_count(config);
  const auto device = training_device(config);
  const auto precision = parse_precision(config.precision);
  const auto store = store::GraphStore::open(config.store);
  const auto ids = detail::num_ids(store);
  const auto train_ids = store.train_ids();
  const auto attacks = detail::with_label(store, train_ids, 1);
  const auto normals = detail::with_label(store, train_ids, 0);
  std::vector<std::uint32_t> validation_ids(store.validation_ids().begin(),
                                            store.validation_ids().end());
  if (train_ids.empty())
    throw std::runtime_error(fmt::format("{}: no training graphs", config.store.string()));
  if (validation_ids.empty()) validation_ids.assign(train_ids.begin(), train_ids.end());

  torch::manual_seed(config.seed);  // initial weights are part of the run's determinism
  const auto& family = classifier_family(config.model);
  const auto model_config = family.resolve_config(config, ids);
  auto model = family.build_classifier(model_config);
  RunDirectory run(checked_run_directory(config));
  const bool curriculum = config.stage == Stage::kCurriculum;
  run.log(
      fmt::format("stage {}: {} {}{} on {} training graphs ({} attack), {} validation, {} IDs, "
                  "device {}, precision {}",
                  to_string(config.stage), models::to_string(config.size), family.name(),
                  config.use_kd ? " with distillation" : "", train_ids.size(), attacks.size(),
                  validation_ids.size(), ids, config.device, config.precision));

  // Scored in `prepare` (only when there is training to do): a finished run skips it.
  std::vector<float> difficulty;
  const auto score_difficulty = [&] {
    const auto vgae_path = autoencoder_for(config);
    auto vgae = load_vgae_checkpoint(vgae_path, device);
    difficulty =
        reconstruction_scores(vgae, store, normals, config.eval_batch_size, device, precision);
    run.log(fmt::format("difficulty of {} normal graphs scored with {}", normals.size(),
                        vgae_path.string()));
  };

  // Distillation: the teacher's logits come from the output cache (no teacher held while
  // training), or from the teacher itself, in device memory or offloaded to pinned host memory.
  models::GraphClassifier teacher;
  std::optional<TeacherOutputCache> teacher_cache;
  std::optional<OffloadedTeacher> offloaded;
  std::function<void()> build_teacher_cache;  // run in `prepare`
  if (config.use_kd) {
    const auto teacher_file = resolve_checkpoint_path(config.teacher_path);
    const bool offload = teacher_offload_applies(config, device, run);
    CheckpointInfo teacher_info;
    teacher = load_classifier_checkpoint(
        teacher_file, config.use_teacher_cache || offload ? torch::kCPU : device, &teacher_info);
    const auto teacher_classes = teacher_info.model_config.at("num_classes").get<std::int64_t>();
    for (auto& p : teacher->parameters()) p.requires_grad_(false);
    if (config.use_teacher_cache) {
      build_teacher_cache = [&, teacher_file, teacher_classes] {
        std::vector<std::uint32_t> cached_ids(train_ids.begin(), train_ids.end());
        cached_ids.insert(cached_ids.end(), validation_ids.begin(), validation_ids.end());
        teacher_cache = detail::cache_teacher_outputs(
            teacher, {TeacherRows::kPerGraph, {{"logits", teacher_classes}}}, cached_ids, config,
            run, teacher_file, device, store,
            [](models::GraphClassifier& classifier, const loader::GraphBatch& batch) {
              return std::vector<at::Tensor>{
                  classifier->forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs)};
            });
      };
    } else if (offload) {
      offloaded.emplace(teacher, device);
    }
  }

  TrainingTask task;
  task.store = &store;
  task.model = model;
  task.checkpoint.kind = std::string(family.name());
  task.checkpoint.model_config = model_config;

  // The stage's loss for a classifier of this configuration: the trained model, or a probe's copy.
  auto objective = [&](models::GraphClassifier& classifier, const loader::GraphBatch& batch,
                       at::Tensor* logits_out) {
    auto logits = classifier->forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs);
    if (logits_out != nullptr) *logits_out = logits;
    if (!config.use_kd) return torch::cross_entropy_loss(logits.to(torch::kFloat), batch.y);
    at::Tensor teacher_logits;
    if (teacher_cache) {
      teacher_logits = teacher_cache->lookup(batch)[0];
    } else {
      torch::NoGradGuard no_grad;
      std::optional<OffloadedTeacher::DeviceScope> on_device;
      if (offloaded) on_device.emplace(*offloaded);
      teacher_logits = teacher->forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs);
    }
    return gat_distillation_loss(logits.to(torch::kFloat), teacher_logits.to(torch::kFloat),
                                 batch.y, config.kd_temperature, config.kd_alpha);
  };
  // What the memory probe measures: this stage's step on a fresh model.
  const StageStep probed_step{[&] {
                                auto fresh = family.build_classifier(model_config);
                                return ProbeSubject{
                                    {fresh},
                                    [&objective, fresh](const loader::GraphBatch& batch) mutable {
                                      return objective(fresh, batch, nullptr);
                                    },
                                    LossReduction::kPerGraph};
                              },
                              config.use_kd ? "distillation" : "plain",
                              {},
                              "train"};

  BatchSizing sizing;
  task.prepare = [&] {
    if (curriculum) score_difficulty();
    if (build_teacher_cache) build_teacher_cache();
    // A teacher held on the device during training is outside the step's fit.
    sizing =
        plan_batch_sizing(config, store, {std::string(family.name()), model_config}, probed_step,
                          run, teacher && !offloaded ? detail::parameter_bytes(*teacher) : 0.0);
  };
  task.plan_epoch = [&](std::int64_t epoch) {
    EpochPlan plan;
    std::vector<std::uint32_t> epoch_ids;
    if (curriculum) {
      auto sample = curriculum_epoch(attacks, normals, difficulty, epoch, config.max_epochs,
                                     config.curriculum, config.seed);
      plan.info = {{"curriculum",
                    {{"ratio", sample.ratio},
                     {"percentile", sample.percentile},
                     {"threshold", sample.threshold},
                     {"hard_normals", sample.hard_normals},
                     {"graphs", sample.graph_ids.size()}}}};
      epoch_ids = std::move(sample.graph_ids);
    } else {
      epoch_ids.assign(train_ids.begin(), train_ids.end());
    }
    plan.batches = make_batches(sizing, store, loader::shuffled(epoch_ids, config.seed, epoch));
    return plan;
  };

  task.loss = [&](const loader::GraphBatch& batch) { return objective(model, batch, nullptr); };
  task.validate = [&]() {
    double loss_sum = 0;
    double ce_sum = 0;
    std::vector<std::uint8_t> labels;
    std::vector<float> scores;
    for_each_batch(
        store, validation_ids, config.eval_batch_size, device,
        [&](const loader::GraphBatch& batch) {
          at::Tensor logits;
          const auto loss = objective(model, batch, &logits);
          const auto n = static_cast<double>(batch.num_graphs);
          const auto logits32 = logits.to(torch::kFloat);
          const double batch_loss = loss.item<double>() * n;
          const double batch_ce = torch::cross_entropy_loss(logits32, batch.y).item<double>() * n;
          const auto p = attack_probability(logits32).cpu().contiguous();
          const auto y = batch.y.to(torch::kCPU, torch::kUInt8).contiguous();
          // Committed only now: an OOM above reruns this batch in halves.
          loss_sum += batch_loss;
          ce_sum += batch_ce;
          scores.insert(scores.end(), p.data_ptr<float>(), p.data_ptr<float>() + p.numel());
          labels.insert(labels.end(), y.data_ptr<std::uint8_t>(),
                        y.data_ptr<std::uint8_t>() + y.numel());
        });
    ValidationResult result;
    const auto n = static_cast<double>(std::max<std::size_t>(1, labels.size()));
    result.loss = loss_sum / n;
    const auto metrics = eval::binary_metrics(labels, scores);
    result.metrics = metrics;
    result.metrics["loss"] = result.loss;
    result.metrics["cross_entropy"] = ce_sum / n;
    return result;
  };

  StageResult result;
  result.run_dir = run.path();
  result.outcome = run_training(config, run, task, hooks);
  return result;
}

}  // namespace headroom::train
