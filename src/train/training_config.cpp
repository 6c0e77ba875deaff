#include "headroom/train/training_config.hpp"

#include "headroom/train/model_family.hpp"
#include "headroom/util/output_path.hpp"

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
  }
  return "?";
}

std::string dataset_name(const TrainingConfig& config) {
  if (!config.dataset.empty()) return config.dataset;
  const auto name = std::filesystem::absolute(config.store).lexically_normal().filename().string();
  return name.empty() ? "dataset" : name;
}

std::filesystem::path run_directory(const TrainingConfig& config) {
  if (config.stage == Stage::kEvaluation)
    return config.runs_dir / dataset_name(config) / "evaluation";
  std::string leaf = models::to_string(config.size) + "_" + to_string(config.stage);
  if (config.use_kd) leaf += "_kd";
  return config.runs_dir / dataset_name(config) / leaf;
}

std::filesystem::path checked_run_directory(const TrainingConfig& config) {
  auto path = run_directory(config);
  util::require_disjoint(path, "the run directory (--runs-dir)", config.store, "the store");
  return path;
}

double effective_learning_rate(const TrainingConfig& config) {
  if (config.learning_rate > 0) return config.learning_rate;
  return model_family(config.model).default_learning_rate(config.size);
}

models::GatConfig resolve_gat_config(const TrainingConfig& config, std::int64_t num_ids) {
  auto gat = models::gat_preset(config.size, num_ids);
  if (config.hidden) gat.hidden = *config.hidden;
  if (config.layers) gat.layers = *config.layers;
  if (config.heads) gat.heads = *config.heads;
  if (config.embedding_dim) gat.embedding_dim = *config.embedding_dim;
  if (config.fc_layers) gat.fc_layers = *config.fc_layers;
  if (config.dropout) gat.dropout = *config.dropout;
  gat.gradient_checkpointing = config.gradient_checkpointing;
  return gat;
}

models::VgaeConfig resolve_vgae_config(const TrainingConfig& config, std::int64_t num_ids) {
  auto vgae = models::vgae_preset(config.size, num_ids);
  if (!config.vgae_hidden.empty()) vgae.hidden = config.vgae_hidden;
  if (config.latent) vgae.latent = *config.latent;
  if (config.heads) vgae.heads = *config.heads;
  if (config.embedding_dim) vgae.embedding_dim = *config.embedding_dim;
  if (config.dropout) vgae.dropout = *config.dropout;
  vgae.gradient_checkpointing = config.gradient_checkpointing;
  return vgae;
}

void validate(const TrainingConfig& config) {
  auto fail = [](const std::string& what) { throw std::invalid_argument(what); };
  if (config.store.empty()) fail("--store: a graph store is required");
  if (config.batch_size < 1) fail("--batch-size must be at least 1");
  if (config.eval_batch_size < 1) fail("--eval-batch-size must be at least 1");
  if (config.max_epochs < 1) fail("--max-epochs must be at least 1");
  if (config.patience < 1) fail("--patience must be at least 1");
  if (config.prefetch_depth < 1) fail("--prefetch-depth must be at least 1");
  if (config.kd_temperature <= 0) fail("--kd-temperature must be positive");
  if (config.kd_alpha < 0 || config.kd_alpha > 1) fail("--kd-alpha must lie in [0, 1]");
  if (config.precision != "32" && config.precision != "bf16-mixed" &&
      config.precision != "16-mixed")
    fail("--precision must be 32, bf16-mixed or 16-mixed, not '" + config.precision + "'");
  const bool cuda = config.device.rfind("cuda", 0) == 0;
  if (!cuda && config.device != "cpu")
    fail("--device must be cpu, cuda or cuda:N, not '" + config.device + "'");
  if (config.memory_budget < 0) fail("--memory-budget must not be negative");
  if (config.host_memory_budget < 0) fail("--host-memory-budget must not be negative");
  if (config.clear_cache_every_n < 0) fail("--clear-cache-every-n must not be negative");
  if (config.step_metrics_every < 0) fail("--step-metrics-every must not be negative");
  if (!(config.target_utilization > 0 && config.target_utilization <= 1))
    fail("--target-utilization must lie in (0, 1]");
  if (config.precision == "16-mixed" && !cuda)
    fail("--precision 16-mixed needs --device cuda (use bf16-mixed on CPU)");
  if (config.stage == Stage::kEvaluation) return;
  if (config.use_kd && config.teacher_path.empty())
    fail("--use-kd true needs --teacher-path (a teacher's best.pt or its run directory)");
  if (config.use_kd && config.size != models::ModelSize::kStudent)
    fail("--use-kd trains a student: use --preset MODEL,student");
  const bool autoencoder_stage = config.stage == Stage::kAutoencoder;
  const auto role = model_family(config.model).role();
  if (autoencoder_stage && role != FamilyRole::kAutoencoder)
    fail("stage autoencoder trains the vgae: use --preset vgae,SIZE");
  if (!autoencoder_stage && role != FamilyRole::kClassifier)
    fail("stage " + to_string(config.stage) + " trains a graph classifier (gat or gcn), not '" +
         config.model + "': use --preset gat,SIZE");
}

namespace {
template <typename T>
nlohmann::json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}
}  // namespace

void to_json(nlohmann::json& json, const TrainingConfig& c) {
  nlohmann::json models_json = nlohmann::json::array();
  for (const auto& m : c.models) models_json.push_back(m.string());
  json = {
      {"stage", to_string(c.stage)},
      {"model", c.model},
      {"size", models::to_string(c.size)},
      {"store", c.store.string()},
      {"dataset", dataset_name(c)},
      {"runs_dir", c.runs_dir.string()},
      {"hidden", optional_json(c.hidden)},
      {"layers", optional_json(c.layers)},
      {"heads", optional_json(c.heads)},
      {"embedding_dim", optional_json(c.embedding_dim)},
      {"fc_layers", optional_json(c.fc_layers)},
      {"latent", optional_json(c.latent)},
      {"vgae_hidden", c.vgae_hidden},
      {"dropout", optional_json(c.dropout)},
      {"gradient_checkpointing", c.gradient_checkpointing},
      {"learning_rate", effective_learning_rate(c)},
      {"weight_decay", c.weight_decay},
      {"gradient_clip", c.gradient_clip},
      {"batch_size", c.batch_size},
      {"eval_batch_size", c.eval_batch_size},
      {"max_epochs", c.max_epochs},
      {"patience", c.patience},
      {"seed", c.seed},
      {"device", c.device},
      {"precision", c.precision},
      {"threads", c.threads},
      {"memory_budget", c.memory_budget},
      {"host_memory_budget", c.host_memory_budget},
      {"target_utilization", c.target_utilization},
      {"pack_batches", c.pack_batches},
      {"clear_cache_every_n", c.clear_cache_every_n},
      {"step_metrics_every", c.step_metrics_every},
      {"prefetch_depth", c.prefetch_depth},
      {"use_kd", c.use_kd},
      {"teacher_path", c.teacher_path.string()},
      {"kd_temperature", c.kd_temperature},
      {"kd_alpha", c.kd_alpha},
      {"use_teacher_cache", c.use_teacher_cache},
      {"offload_teacher_to_cpu", c.offload_teacher_to_cpu},
      {"autoencoder_path", c.autoencoder_path.string()},
      {"curriculum",
       {{"start_ratio", c.curriculum.start_ratio},
        {"ratio_growth", c.curriculum.ratio_growth},
        {"start_percentile", c.curriculum.start_percentile},
        {"percentile_growth", c.curriculum.percentile_growth}}},
      {"models", models_json},
  };
}

}  // namespace headroom::train
