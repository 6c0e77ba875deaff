// Everything a training or evaluation stage reads: what to train (preset and model overrides),
// where (store, run directory, device, precision) and how (optimiser, schedule, distillation,
// curriculum). Plain data; every field is a command-line flag (docs/configuration.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "headroom/models/model_config.hpp"
#include "headroom/train/curriculum.hpp"

namespace headroom::train {

enum class Stage { kAutoencoder, kCurriculum, kNormal, kEvaluation };
std::string to_string(Stage stage);

struct TrainingConfig {
  Stage stage = Stage::kNormal;
  std::string model = "gat";  // a model family's name (model_family.hpp): gat, vgae, gcn
  models::ModelSize size = models::ModelSize::kTeacher;

  std::filesystem::path store;  // graph store to train on (required)
  std::string dataset;          // run-directory name; default: the store's name
  std::filesystem::path runs_dir = "runs";

  // Model overrides (unset: the preset's value).
  std::optional<std::int64_t> hidden;  // GAT hidden channels per head
  std::optional<std::int64_t> layers;  // GAT layers
  std::optional<std::int64_t> heads;
  std::optional<std::int64_t> embedding_dim;
  std::optional<std::int64_t> fc_layers;
  std::optional<std::int64_t> latent;     // VGAE latent size
  std::vector<std::int64_t> vgae_hidden;  // VGAE encoder widths (empty: preset)
  std::optional<double> dropout;
  bool gradient_checkpointing = true;

  // Optimisation.
  double learning_rate = 0;  // 0: 0.002 (VGAE), 0.003 (GAT teacher), 0.001 (GAT student)
  double weight_decay = 1e-4;
  double gradient_clip = 1.0;           // max global L2 norm; 0 disables
  std::int64_t batch_size = 512;        // graphs per training batch
  std::int64_t eval_batch_size = 4096;  // graphs per validation/evaluation/difficulty batch
  std::int64_t max_epochs = 50;
  std::int64_t patience = 10;  // epochs without a better validation loss before stopping
  std::uint64_t seed = 42;

  std::string device = "cpu";    // "cpu", "cuda" or "cuda:N"
  std::string precision = "32";  // "32", "bf16-mixed" (CPU, CUDA), "16-mixed" (CUDA)
  int threads = 0;               // intra-op threads on CPU; 0: all cores
  std::int64_t prefetch_depth = 4;
  bool progress = true;  // progress bar (drawn only on a terminal)
  bool resume = true;    // continue an interrupted run in the same directory

  // Memory. Device memory for training, bytes: 0 = the GPU's total memory, or on CPU the physical
  // RAM. On CPU the counting allocator enforces it (an allocation past it fails like a device
  // OOM, and the OOM guard splits the batch); on CUDA it caps the caching allocator.
  std::int64_t memory_budget = 0;
  std::int64_t host_memory_budget = 0;  // RAM, bytes; 0 = physical RAM (reported, planned)
  double target_utilization = 0.9;      // share of the budget the planner fills
  bool pack_batches = true;  // with a budget: pack batches by predicted bytes (batch_sizing.hpp)
  // CUDA: release the caching allocator's unused blocks every N training steps (0: never). Each
  // release synchronises the device, so it is off by default.
  std::int64_t clear_cache_every_n = 0;
  // A memory sample into metrics.jsonl every N training steps (0: per-epoch lines only).
  std::int64_t step_metrics_every = 50;

  // Distillation.
  bool use_kd = false;
  std::filesystem::path teacher_path;  // a best.pt of the same model kind, teacher size
  double kd_temperature = 4.0;
  double kd_alpha = 0.7;
  // The frozen teacher's outputs computed once per graph into a memory-mapped file in the run
  // directory, so that student training holds no teacher (train/teacher_output_cache.hpp).
  bool use_teacher_cache = true;
  // Without the cache, on CUDA: keep the teacher's weights in pinned host memory and copy them to
  // the device for each forward pass.
  bool offload_teacher_to_cpu = false;

  // Curriculum (stage curriculum).
  std::filesystem::path autoencoder_path;  // VGAE that scores difficulty; default: this size's
  CurriculumSchedule curriculum;

  // Evaluation: the classifiers to evaluate (run directories or best.pt files); default: every
  // GAT stage found in runs/{dataset}/.
  std::vector<std::filesystem::path> models;
};

// The run directory: runs/{dataset}/{size}_{stage}[_kd].
std::filesystem::path run_directory(const TrainingConfig& config);
// run_directory(config), after checking that it neither is, lies inside nor contains the store
// (throws std::runtime_error naming both): what a stage opens before it writes anything.
std::filesystem::path checked_run_directory(const TrainingConfig& config);
std::string dataset_name(const TrainingConfig& config);
double effective_learning_rate(const TrainingConfig& config);

models::GatConfig resolve_gat_config(const TrainingConfig& config, std::int64_t num_ids);
models::VgaeConfig resolve_vgae_config(const TrainingConfig& config, std::int64_t num_ids);

// Throws std::invalid_argument naming the field for inconsistent settings (KD without teacher,
// 16-mixed on CPU, non-positive sizes, ...).
void validate(const TrainingConfig& config);

void to_json(nlohmann::json& json, const TrainingConfig& config);

}  // namespace headroom::train
