#include "headroom/train/stages/autoencoder_stage.hpp"
#include "headroom/train/step/graph_task_batch.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <functional>
#include <optional>
#include <stdexcept>

#include "autoencoder_teacher.hpp"
#include "headroom/loader/epoch_order.hpp"
#include "headroom/train/batches/batch_sizing.hpp"
#include "headroom/train/batches/checkpointing_choice.hpp"
#include "headroom/train/batches/sharded_pass.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/loop/run_resume.hpp"
#include "headroom/train/stages/prepared_stage.hpp"
#include "headroom/train/step/losses.hpp"
#include "stage_preconditions.hpp"
#include "stage_support.hpp"

namespace headroom::train {

namespace {

// One autoencoder stage run: an autoencoder family's model (the VGAE by default) on the normal
// training graphs, and with distillation its projection onto the teacher's latent space. Built in
// the order that keeps runs deterministic: seed, model, run directory, teacher, projection.
class AutoencoderStage {
 public:
  explicit AutoencoderStage(const TrainingConfig& config)
      : config_(config),
        store_(store::GraphStore::open(config.run.store)),
        context_(resolve_run_context(config, store_, CommandWork::kTraining)),
        inputs_(model_inputs(store_)),
        train_normals_(detail::with_label(store_, store_.train_ids(), 0)),
        validation_normals_(detail::with_label(store_, store_.validation_ids(), 0)),
        family_(autoencoder_family(config.model.family)) {
    if (train_normals_.empty())
      throw std::runtime_error(fmt::format(
          "{}: no normal training graphs to train the autoencoder on", config.run.store.string()));
    detail::require_validation_graphs(store_, validation_normals_.size(), "autoencoder",
                                      "normal validation graphs");
    torch::manual_seed(config.run.seed);  // initial weights are part of the run's determinism
    model_config_ = family_.resolve_config(config.model, inputs_);
    detail::require_model_fits_budget(family_, model_config_, context_, "autoencoder");
    model_ = family_.build_autoencoder(model_config_);
    run_.emplace(checked_run_directory(config), /*echo=*/true, config.run.when_locked);
    run_->log(fmt::format(
        "stage autoencoder: {} {}{} on {} normal graphs ({} validation), {} identities, {} "
        "node features, device {}, precision {}",
        models::to_string(config.model.size), family_.name(),
        config.distillation.enabled ? " with distillation" : "", train_normals_.size(),
        validation_normals_.size(), inputs_.num_ids, inputs_.in_features, config.run.device,
        config.run.precision));
    if (config.distillation.enabled) {
      // Loaded before the projection, whose initial weights are then the same in every mode.
      teacher_.emplace(config, context_, *run_, store::content_identity(store_.metadata()));
      projection_ =
          torch::nn::Linear(family_.latent_width(model_config_), teacher_->latent_width());
    }
  }

  StageResult run(const LoopHooks& hooks) {
    TrainingTask task;
    task.batches = std::make_shared<GraphBatchBuilder>(store_);
    task.data_identity = store::content_identity(store_.metadata());
    task.model = model_;
    task.checkpoint.kind = std::string(family_.name());
    task.loss_reduction = LossReduction::kPerNode;
    task.checkpoint.model_config = model_config_;
    if (projection_) task.auxiliary.push_back(projection_.ptr());
    // The configuration the checkpoints record is the one prepare() settled (checkpointing).
    task.prepare = [this, &task] {
      prepare();
      task.checkpoint.model_config = model_config_;
    };
    task.plan_epoch = [this](std::int64_t epoch) {
      EpochPlan plan;
      plan.batches =
          make_batches(sizing_, store_, loader::shuffled(train_normals_, config_.run.seed, epoch));
      return plan;
    };
    task.loss = graph_task_loss(
        [this](const loader::GraphBatch& batch) { return objective(*model_, projection_, batch); });
    task.validate = [this] { return validate(); };
    StageResult result;
    result.run_dir = run_->path();
    result.outcome = run_training(config_, context_, *run_, task, hooks);
    return result;
  }

  // What the step needs before it can run: the teacher cache.
  void prepare_inputs() {
    if (!teacher_ || !config_.distillation.teacher_cache) return;
    std::vector<std::uint32_t> cached_ids = train_normals_;
    cached_ids.insert(cached_ids.end(), validation_normals_.begin(), validation_normals_.end());
    teacher_->build_cache(std::move(cached_ids), store_);
  }

  ModelSpec model_spec() const { return {std::string(family_.name()), model_config_}; }
  const std::vector<std::uint32_t>& training_ids() const { return train_normals_; }

  // What the memory probe measures: this stage's step on fresh modules, on the normal graphs it
  // trains on.
  ProbeTarget probe_target() {
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

 private:
  // Only when there is training to do: the step's inputs, then its memory fit.
  void prepare() {
    prepare_inputs();
    // A teacher held on the device during training is outside the step's fit.
    const double reserved = teacher_ ? teacher_->device_bytes() : 0.0;
    const auto choice = choose_checkpointing(reserved);
    // Off: the unchecked step the choice measured is the one that trains.
    const MeasuredPeak* known = choice ? choice->fit_when_off() : nullptr;
    sizing_ = plan_batch_sizing(config_, context_, store_, model_spec(), probe_target(), *run_,
                                reserved, known);
  }

  // --gradient-checkpointing auto: the planner's choice, applied to the model and its
  // configuration (the checkpoints' and the fit's), before batches are sized.
  std::optional<CheckpointingChoice> choose_checkpointing(double reserved) {
    if (config_.model.gradient_checkpointing != Checkpointing::kAuto) return std::nullopt;
    model_config_["gradient_checkpointing"] = false;
    const auto choice = choose_gradient_checkpointing(config_, context_, store_, model_spec(),
                                                      probe_target(), reserved);
    model_config_["gradient_checkpointing"] = choice.on;
    model_->set_gradient_checkpointing(choice.on);
    run_->log(choice.describe());
    return choice;
  }

  // The stage's loss for a model of this configuration (and, distilled, its projection): the
  // trained ones, or a probe's copies.
  at::Tensor objective(models::GraphAutoencoderImpl& model, torch::nn::Linear& student_projection,
                       const loader::GraphBatch& batch) {
    const auto pass = family_.training_pass(model, batch);
    if (!teacher_) return pass.loss;
    const auto teacher = teacher_->outputs(batch);
    return vgae_distillation_loss(student_projection->forward(pass.encoding.latent), teacher.latent,
                                  pass.encoding.reconstruction, teacher.reconstruction, pass.loss,
                                  config_.distillation.alpha);
  }

  ValidationResult validate() {
    ValidationResult result;
    double sum = 0;
    std::int64_t graphs = 0;
    // Sharded over the ranks, folded in batch order (train/batches/sharded_pass.hpp).
    const auto contributions = contributions_across_ranks(
        store_, validation_normals_, inference_limits(config_, context_), validation_batches_,
        context_.device, [&](const loader::GraphBatch& batch) {
          const auto n = static_cast<double>(batch.num_graphs);
          return BatchContribution{objective(*model_, projection_, batch).item<double>() * n, n};
        });
    for (const auto& c : contributions) {
      sum += c[0];
      graphs += static_cast<std::int64_t>(c[1]);
    }
    result.loss = graphs > 0 ? sum / static_cast<double>(graphs) : 0.0;
    result.metrics = {{"loss", result.loss}, {"graphs", graphs}};
    return result;
  }

  const TrainingConfig& config_;
  store::GraphStore store_;
  RunContext context_;  // resolved once, with the store open
  models::ModelInputs inputs_;
  std::vector<std::uint32_t> train_normals_;
  std::vector<std::uint32_t> validation_normals_;
  std::optional<InferenceBatching> validation_batches_;  // planned at the first validation
  const AutoencoderFamily& family_;
  nlohmann::json model_config_;  // the family's configuration, as best.pt records it
  models::GraphAutoencoder model_;
  std::optional<RunDirectory> run_;
  // Distillation.
  std::optional<detail::AutoencoderTeacher> teacher_;
  torch::nn::Linear projection_{nullptr};
  BatchSizing sizing_;  // planned in prepare()
};

}  // namespace

std::unique_ptr<PreparedStage> prepare_autoencoder_stage(const TrainingConfig& config) {
  return detail::prepare<AutoencoderStage>(config);
}

StageResult run_autoencoder_stage(const TrainingConfig& config, const LoopHooks& hooks) {
  validate(config);
  AutoencoderStage stage(config);
  return stage.run(hooks);
}

const StageTraits kAutoencoderStage{
    .name = "autoencoder",
    .default_preset = "vgae,teacher",
    .reads = {.model = true, .training = true, .optimiser = true, .distillation = true},
    .run_directory_name = model_stage_directory_name,
    .validate =
        [](const TrainingConfig& config) {
          validate_model_stage(config, FamilyRole::kAutoencoder);
        },
};

const StageDefinition kAutoencoderStageDefinition{
    .traits = &kAutoencoderStage,
    .run = run_autoencoder_stage,
    .prepare = prepare_autoencoder_stage,
    .example =
        "Example: headroom autoencoder --store stores/hcrl_sa --preset vgae,teacher\n"
        "         headroom autoencoder --store stores/hcrl_sa --preset vgae,student "
        "--use-kd true --teacher-path runs/hcrl_sa/teacher_autoencoder",
};

}  // namespace headroom::train
