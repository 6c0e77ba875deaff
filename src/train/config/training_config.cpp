#include "headroom/train/config/training_config.hpp"

#include "headroom/train/families/model_family.hpp"
#include "headroom/util/output_path.hpp"
#include "headroom/util/printable_text.hpp"

#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace headroom::train {

std::string to_string(Stage stage) {
  switch (stage) {
    case Stage::kAutoencoder:
      return "autoencoder";
    case Stage::kCurriculum:
      return "curriculum";
    case Stage::kNormal:
      return "normal";
    case Stage::kEvaluation:
      return "evaluation";
    case Stage::kFusion:
      return "fusion";
    case Stage::kNode:
      return "node";
  }
  return "?";
}

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

namespace {

constexpr std::string_view kDefaultFusionClassifier = "student_curriculum_kd";
constexpr std::string_view kDefaultFusionAutoencoder = "student_autoencoder_kd";

// The family a stage trains unless told otherwise: left out of its run directory's name.
std::string_view stage_default_family(Stage stage) {
  return stage == Stage::kAutoencoder ? "vgae" : "gat";
}

// A fusion input's run-directory name: the directory itself, or the one holding a given
// checkpoint file; characters outside [A-Za-z0-9._-] become '_' (the name goes into a path).
std::string fusion_input_name(const std::filesystem::path& given, std::string_view fallback) {
  if (given.empty()) return std::string(fallback);
  auto path = given.lexically_normal();
  if (!path.has_filename()) path = path.parent_path();
  if (path.extension() == ".pt") path = path.parent_path();
  std::string name = path.filename().string();
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  return name.empty() || name == "." || name == ".." ? std::string("input") : name;
}

std::string fusion_leaf(const FusionOptions& fusion) {
  const auto classifier = fusion_input_name(fusion.classifier_path, kDefaultFusionClassifier);
  const auto autoencoder = fusion_input_name(fusion.autoencoder_path, kDefaultFusionAutoencoder);
  std::string leaf = "fusion_" + fusion.method;
  if (classifier != kDefaultFusionClassifier || autoencoder != kDefaultFusionAutoencoder)
    leaf += "_" + classifier + "+" + autoencoder;
  return leaf;
}

}  // namespace

std::filesystem::path run_directory(const TrainingConfig& config) {
  const auto dataset_dir = config.run.runs_dir / dataset_name(config);
  if (config.stage == Stage::kEvaluation) return dataset_dir / "evaluation";
  if (config.stage == Stage::kFusion) return dataset_dir / fusion_leaf(config.fusion);
  if (config.stage == Stage::kNode) return dataset_dir / ("node_" + config.model.family);
  std::string leaf = models::to_string(config.model.size) + "_" + to_string(config.stage);
  if (config.model.family != stage_default_family(config.stage)) leaf += "_" + config.model.family;
  if (config.distillation.enabled) leaf += "_kd";
  return dataset_dir / leaf;
}

std::filesystem::path checked_run_directory(const TrainingConfig& config) {
  auto path = run_directory(config);
  util::require_disjoint(path, "the run directory (--runs-dir)", config.run.store, "the store");
  return path;
}

double effective_learning_rate(const TrainingConfig& config) {
  if (config.optimisation.learning_rate > 0) return config.optimisation.learning_rate;
  if (config.stage == Stage::kFusion) return 1e-3;  // upstream's fusion DQN
  if (config.stage == Stage::kNode) return 0.02;    // TextGCN's
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
}

void FusionOptions::validate() const {
  if (method != "dqn" && method != "logistic")
    fail("--fusion-method must be dqn or logistic, not '" + method + "'");
  if (!(gamma >= 0 && gamma < 1)) fail("--fusion-gamma must lie in [0, 1)");
  if (!(holdout_fraction > 0 && holdout_fraction < 1)) fail("--fusion-holdout must lie in (0, 1)");
  if (max_epochs < 1) fail("--fusion-epochs must be at least 1");
}

void validate(const TrainingConfig& config) {
  config.run.validate();
  config.evaluation.validate();
  config.optimisation.validate();
  config.memory.validate();
  if (config.stage == Stage::kEvaluation) return;
  if (config.stage == Stage::kFusion) return config.fusion.validate();
  if (config.stage == Stage::kNode) {
    if (config.model.family != "gcn" && config.model.family != "gat")
      fail("stage node trains a GCN or a GAT on one graph's nodes (--preset gcn or gat), not '" +
           config.model.family + "'");
    if (config.distillation.enabled) fail("--use-kd is not available for stage node");
    return;
  }
  config.model.validate();
  config.distillation.validate();
  config.curriculum.validate();
  if (config.distillation.enabled && config.model.size != models::ModelSize::kStudent)
    fail("--use-kd trains a student: use --preset MODEL,student");
  const bool autoencoder_stage = config.stage == Stage::kAutoencoder;
  const auto role = model_family(config.model.family).role();
  if (autoencoder_stage && role != FamilyRole::kAutoencoder)
    fail("stage autoencoder trains the vgae: use --preset vgae,SIZE");
  if (!autoencoder_stage && role != FamilyRole::kClassifier)
    fail("stage " + to_string(config.stage) + " trains a graph classifier (gat or gcn), not '" +
         config.model.family + "': use --preset gat,SIZE");
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
  // Only a fusion run records these: the configurations of the other stages stay as they were,
  // so their runs still resume.
  if (c.stage == Stage::kEvaluation)
    json["vehicle_calibration"] = c.evaluation.vehicle_calibration_windows;
  if (c.stage == Stage::kFusion) {
    json["fusion_method"] = c.fusion.method;
    json["fusion_classifier"] = c.fusion.classifier_path.string();
    json["fusion_autoencoder"] = c.fusion.autoencoder_path.string();
    json["fusion_gamma"] = c.fusion.gamma;
    json["fusion_holdout"] = c.fusion.holdout_fraction;
    json["fusion_epochs"] = c.fusion.max_epochs;
  }
}

}  // namespace headroom::train
