#include "headroom/train/classifier_stage.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <stdexcept>

#include "headroom/eval/binary_metrics.hpp"
#include "headroom/loader/epoch_order.hpp"
#include "headroom/train/batch_sizing.hpp"
#include "headroom/train/curriculum.hpp"
#include "headroom/train/graph_scores.hpp"
#include "headroom/train/losses.hpp"
#include "headroom/train/model_checkpoint.hpp"
#include "stage_support.hpp"

namespace headroom::train {
namespace {

// The VGAE that scores difficulty: --autoencoder-path, else this size's autoencoder run (the
// distilled one first).
std::filesystem::path autoencoder_for(const TrainingConfig& config) {
  if (!config.autoencoder_path.empty()) return resolve_checkpoint_path(config.autoencoder_path);
  TrainingConfig vgae = config;
  vgae.stage = Stage::kAutoencoder;
  vgae.model = models::ModelKind::kVgae;
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

StageResult run_classifier_stage(const TrainingConfig& config) {
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
  const auto gat_config = resolve_gat_config(config, ids);
  auto model = models::GATWithJK(gat_config);
  RunDirectory run(run_directory(config));
  const bool curriculum = config.stage == Stage::kCurriculum;
  run.log(
      fmt::format("stage {}: {} GAT{} on {} training graphs ({} attack), {} validation, {} IDs, "
                  "device {}, precision {}",
                  to_string(config.stage), models::to_string(config.size),
                  config.use_kd ? " with distillation" : "", train_ids.size(), attacks.size(),
                  validation_ids.size(), ids, config.device, config.precision));

  std::vector<float> difficulty;
  if (curriculum) {
    const auto vgae_path = autoencoder_for(config);
    auto vgae = load_vgae_checkpoint(vgae_path, device);
    difficulty =
        reconstruction_scores(vgae, store, normals, config.eval_batch_size, device, precision);
    run.log(fmt::format("difficulty of {} normal graphs scored with {}", normals.size(),
                        vgae_path.string()));
  }

  models::GATWithJK teacher{nullptr};
  if (config.use_kd) {
    teacher = load_gat_checkpoint(resolve_checkpoint_path(config.teacher_path), device);
    for (auto& p : teacher->parameters()) p.requires_grad_(false);
  }

  TrainingTask task;
  task.store = &store;
  task.model = model.ptr();
  task.checkpoint.kind = models::ModelKind::kGat;
  task.checkpoint.model_config = gat_config;

  const auto sizing = plan_batch_sizing(config, store, gat_config, run);
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

  auto objective = [&](const loader::GraphBatch& batch, at::Tensor* logits_out) {
    auto logits = model->forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs);
    if (logits_out != nullptr) *logits_out = logits;
    if (!config.use_kd) return torch::cross_entropy_loss(logits.to(torch::kFloat), batch.y);
    at::Tensor teacher_logits;
    {
      torch::NoGradGuard no_grad;
      teacher_logits = teacher->forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs);
    }
    return gat_distillation_loss(logits.to(torch::kFloat), teacher_logits.to(torch::kFloat),
                                 batch.y, config.kd_temperature, config.kd_alpha);
  };
  task.loss = [&](const loader::GraphBatch& batch) { return objective(batch, nullptr); };
  task.validate = [&]() {
    double loss_sum = 0;
    double ce_sum = 0;
    std::vector<std::uint8_t> labels;
    std::vector<float> scores;
    for_each_batch(
        store, validation_ids, config.eval_batch_size, device,
        [&](const loader::GraphBatch& batch) {
          at::Tensor logits;
          const auto loss = objective(batch, &logits);
          const auto n = static_cast<double>(batch.num_graphs);
          const auto logits32 = logits.to(torch::kFloat);
          const double batch_loss = loss.item<double>() * n;
          const double batch_ce = torch::cross_entropy_loss(logits32, batch.y).item<double>() * n;
          const auto p = torch::softmax(logits32, 1).select(1, 1).cpu().contiguous();
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
  result.outcome = run_training(config, run, task);
  return result;
}

}  // namespace headroom::train
