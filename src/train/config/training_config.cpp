#include "headroom/train/config/training_config.hpp"

#include "headroom/train/families/model_family.hpp"
#include "headroom/util/directory_argument.hpp"
#include "headroom/util/output_path.hpp"
#include "headroom/util/printable_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace headroom::train {

const StageTraits& Stage::traits() const {
  if (traits_ == nullptr)
    throw std::logic_error("a training configuration was used before its stage was set");
  return *traits_;
}

std::string to_string(Stage stage) { return std::string(stage.name()); }

namespace {

// --dataset names one directory under --runs-dir: a path of its own ("../x", "/x", "a/b") would
// put run directories outside it.
void require_one_directory_name(const std::string& dataset) {
  const std::filesystem::path path(dataset);
  if (dataset.find('/') != std::string::npos || dataset == "." || dataset == ".." ||
      path.is_absolute())
    throw std::invalid_argument(
        "--dataset must name one directory under --runs-dir (no '/', not "
        "'.' or '..'), not '" +
        util::printable(dataset) + "'");
}

}  // namespace

std::string dataset_name(const TrainingConfig& config) {
  if (!config.run.dataset.empty()) {
    require_one_directory_name(config.run.dataset);
    return config.run.dataset;
  }
  const auto name =
      std::filesystem::absolute(config.run.store).lexically_normal().filename().string();
  return name.empty() ? "dataset" : name;
}

std::string model_stage_directory_name(const TrainingConfig& config) {
  const auto& stage = config.stage.traits();
  std::string name = models::to_string(config.model.size) + "_" + std::string(stage.name);
  if (config.model.family != stage.default_family()) name += "_" + config.model.family;
  if (config.distillation.enabled) name += "_kd";
  return name;
}

std::filesystem::path run_directory(const TrainingConfig& config) {
  return config.run.runs_dir / dataset_name(config) /
         config.stage.traits().run_directory_name(config);
}

std::filesystem::path checked_run_directory(const TrainingConfig& config) {
  auto path = run_directory(config);
  util::require_directory_or_absent(
      path, fmt::format("the run directory (--runs-dir) '{}'", util::printable_path(path)));
  util::require_disjoint(path, "the run directory (--runs-dir)", config.run.store, "the store");
  return path;
}

double effective_learning_rate(const TrainingConfig& config) {
  if (config.optimisation.learning_rate > 0) return config.optimisation.learning_rate;
  if (const auto stage_default = config.stage.traits().default_learning_rate)
    return stage_default(config);
  return model_family(config.model.family).default_learning_rate(config.model.size);
}

namespace {

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument(what); }

// Written so that NaN fails too: every comparison with NaN is false.
void require_non_negative(double value, const char* flag) {
  if (!(value >= 0 && std::isfinite(value)))
    fail(std::string(flag) + " must be a finite number, not negative");
}

}  // namespace

void OptimisationOptions::validate() const {
  require_non_negative(learning_rate, "--learning-rate (0: the model's default)");
  require_non_negative(weight_decay, "--weight-decay");
  require_non_negative(gradient_clip, "--gradient-clip (0: no clipping)");
  if (batch_size < 1) fail("--batch-size must be at least 1");
  if (eval_batch_size < 1) fail("--eval-batch-size must be at least 1");
  if (max_epochs < 1) fail("--max-epochs must be at least 1");
  if (patience < 1) fail("--patience must be at least 1");
}

void MemoryOptions::validate() const {
  if (budget < 0) fail("--memory-budget must not be negative");
  if (host_budget < 0) fail("--host-memory-budget must not be negative");
  if (clear_cache_every_n < 0) fail("--clear-cache-every-n must not be negative");
  if (step_metrics_every < 0) fail("--step-metrics-every must not be negative");
  if (!(target_utilization > 0 && target_utilization <= 1))
    fail("--target-utilization must lie in (0, 1]");
}

void DistillationOptions::validate() const {
  if (!(temperature > 0 && std::isfinite(temperature)))
    fail("--kd-temperature must be a positive finite number");
  if (!(alpha >= 0 && alpha <= 1)) fail("--kd-alpha must lie in [0, 1]");
  if (enabled && teacher_path.empty())
    fail("--use-kd true needs --teacher-path (a teacher's best.pt or its run directory)");
}

void CurriculumOptions::validate() const {
  if (!(schedule.start_ratio >= 0 && schedule.ratio_growth >= 0 &&
        std::isfinite(schedule.start_ratio + schedule.ratio_growth)))
    fail("--curriculum-start-ratio and --curriculum-ratio-growth must be finite, not negative");
  const double end_percentile = schedule.start_percentile + schedule.percentile_growth;
  if (!(schedule.start_percentile >= 0 && schedule.start_percentile <= 100 && end_percentile >= 0 &&
        end_percentile <= 100))
    fail(
        "--curriculum-start-percentile, and it plus --curriculum-percentile-growth, must lie in "
        "[0, 100]");
}

void RunOptions::validate() const {
  if (store.empty()) fail("--store: a graph store is required");
  if (!dataset.empty()) require_one_directory_name(dataset);
  if (prefetch_depth < 1) fail("--prefetch-depth must be at least 1");
  if (threads < 0) fail("--threads must not be negative");
  if (precision != "32" && precision != "bf16-mixed" && precision != "16-mixed")
    fail("--precision must be 32, bf16-mixed or 16-mixed, not '" + precision + "'");
  const bool cuda = device.rfind("cuda", 0) == 0;
  if (!cuda && device != "cpu") fail("--device must be cpu, cuda or cuda:N, not '" + device + "'");
  if (precision == "16-mixed" && !cuda)
    fail("--precision 16-mixed needs --device cuda (use bf16-mixed on CPU)");
}

void EvaluationOptions::validate() const {
  if (calibration != "f1" && calibration != "fpr" && calibration != "none")
    fail("--calibration must be f1, fpr or none, not '" + calibration + "'");
  if (!(target_fpr >= 0 && target_fpr < 1)) fail("--target-fpr must lie in [0, 1)");
  if (vehicle_calibration_windows < 0) fail("--vehicle-calibration must be at least 0");
  if (label_free_windows < 0) fail("--label-free-windows must be at least 0");
  if (!(label_free_fence_mads > 0)) fail("--label-free-fence must be above 0");
  if (anomaly_top_nodes < 0) fail("--anomaly-top-nodes must be at least 0");
}

void FusionOptions::validate() const {
  if (method != "dqn" && method != "logistic")
    fail("--fusion-method must be dqn or logistic, not '" + method + "'");
  if (!(gamma >= 0 && gamma < 1)) fail("--fusion-gamma must lie in [0, 1)");
  if (!(holdout_fraction > 0 && holdout_fraction < 1)) fail("--fusion-holdout must lie in (0, 1)");
  if (max_epochs < 1) fail("--fusion-epochs must be at least 1");
  if (with_baseline && method != "logistic")
    fail(
        "--fusion-with-baseline needs --fusion-method logistic: the DQN's fused score mixes the "
        "two models' scores alone");
}

void validate(const TrainingConfig& config) {
  config.run.validate();
  config.evaluation.validate();
  config.optimisation.validate();
  config.memory.validate();
  if (const auto stage_checks = config.stage.traits().validate) stage_checks(config);
}

void validate_model_stage(const TrainingConfig& config, FamilyRole role) {
  config.model.validate();
  config.distillation.validate();
  config.curriculum.validate();
  if (config.distillation.enabled && config.model.size != models::ModelSize::kStudent)
    fail("--use-kd trains a student: use --preset MODEL,student");
  if (model_family(config.model.family).role() == role) return;
  const auto& stage = config.stage.traits();
  fail(fmt::format("stage {} trains {} ({}), not '{}': use --preset {},SIZE", stage.name,
                   role == FamilyRole::kAutoencoder ? "an autoencoder" : "a graph classifier",
                   fmt::join(model_family_names(role), " or "), config.model.family,
                   stage.default_family()));
}

namespace {
template <typename T>
nlohmann::json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}
}  // namespace

void to_json(nlohmann::json& json, const TrainingConfig& c) {
  nlohmann::json models_json = nlohmann::json::array();
  for (const auto& m : c.evaluation.models) models_json.push_back(m.string());
  json = {
      {"stage", to_string(c.stage)},
      {"model", c.model.family},
      {"size", models::to_string(c.model.size)},
      {"store", c.run.store.string()},
      {"dataset", dataset_name(c)},
      {"runs_dir", c.run.runs_dir.string()},
      {"hidden", optional_json(c.model.hidden)},
      {"layers", optional_json(c.model.layers)},
      {"heads", optional_json(c.model.heads)},
      {"embedding_dim", optional_json(c.model.embedding_dim)},
      {"fc_layers", optional_json(c.model.fc_layers)},
      {"latent", optional_json(c.model.latent)},
      {"vgae_hidden", c.model.vgae_hidden},
      {"vgae_layout", c.model.vgae_layout},
      {"dropout", optional_json(c.model.dropout)},
      {"gradient_checkpointing", std::string(to_string(c.model.gradient_checkpointing))},
      {"learning_rate", effective_learning_rate(c)},
      {"weight_decay", c.optimisation.weight_decay},
      {"gradient_clip", c.optimisation.gradient_clip},
      {"batch_size", c.optimisation.batch_size},
      {"eval_batch_size", c.optimisation.eval_batch_size},
      {"max_epochs", c.optimisation.max_epochs},
      {"patience", c.optimisation.patience},
      {"seed", c.run.seed},
      {"device", c.run.device},
      {"precision", c.run.precision},
      {"threads", c.run.threads},
      {"memory_budget", c.memory.budget},
      {"host_memory_budget", c.memory.host_budget},
      {"target_utilization", c.memory.target_utilization},
      {"pack_batches", c.memory.pack_batches},
      {"clear_cache_every_n", c.memory.clear_cache_every_n},
      {"step_metrics_every", c.memory.step_metrics_every},
      {"prefetch_depth", c.run.prefetch_depth},
      {"use_kd", c.distillation.enabled},
      {"teacher_path", c.distillation.teacher_path.string()},
      {"kd_temperature", c.distillation.temperature},
      {"kd_alpha", c.distillation.alpha},
      {"use_teacher_cache", c.distillation.teacher_cache},
      {"offload_teacher_to_cpu", c.distillation.offload_teacher},
      {"autoencoder_path", c.curriculum.autoencoder_path.string()},
      {"curriculum",
       {{"start_ratio", c.curriculum.schedule.start_ratio},
        {"ratio_growth", c.curriculum.schedule.ratio_growth},
        {"start_percentile", c.curriculum.schedule.start_percentile},
        {"percentile_growth", c.curriculum.schedule.percentile_growth}}},
      {"models", models_json},
      {"calibration", c.evaluation.calibration},
      {"target_fpr", c.evaluation.target_fpr},
  };
  if (const auto record = c.stage.traits().record) record(json, c);
}

}  // namespace headroom::train
