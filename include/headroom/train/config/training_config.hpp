// The configuration of a training or evaluation stage, as option groups: what to train (model),
// how (optimisation, memory, distillation, curriculum) and where (run). Plain data.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "headroom/eval/label_free_threshold.hpp"
#include "headroom/models/model_config.hpp"
#include "headroom/models/model_inputs.hpp"
#include "headroom/train/config/curriculum.hpp"
#include "headroom/train/config/stage.hpp"
#include "headroom/train/families/model_options.hpp"
#include "headroom/util/exclusive_lock.hpp"

namespace headroom::train {

// How the optimiser steps and for how long.
struct OptimisationOptions {
  double learning_rate = 0;  // 0: the family's default for the size (effective_learning_rate)
  double weight_decay = 1e-4;
  double gradient_clip = 1.0;           // max global L2 norm; 0 disables
  std::int64_t batch_size = 512;        // graphs per training batch (a cap when packing by bytes)
  std::int64_t eval_batch_size = 4096;  // graphs per validation/evaluation/difficulty batch
  std::int64_t max_epochs = 50;
  std::int64_t patience = 10;  // epochs without a better validation loss before stopping

  void validate() const;
};

// The memory budget and how batches are planned within it (batch_sizing.hpp).
struct MemoryOptions {
  // Device memory for training, bytes: 0 = the GPU's total memory, or on CPU what the host
  // budget leaves after the process's own memory (train/context/host_memory.hpp).
  // On CPU the counting allocator enforces it (an allocation past it fails like a device OOM, and
  // the OOM guard splits the batch); on CUDA it caps the caching allocator.
  std::int64_t budget = 0;
  // Host RAM, bytes; 0 = 95% of the detected host limit (memory/host_memory_budget.hpp): planned
  // before training and watched during it.
  std::int64_t host_budget = 0;
  double target_utilization = 0.9;  // share of the budget the planner fills
  bool pack_batches = true;         // with a budget: pack batches by predicted bytes
  // CUDA: release the caching allocator's unused blocks every N training steps (0: never). Each
  // release synchronises the device, so it is off by default.
  std::int64_t clear_cache_every_n = 0;
  // A memory sample into metrics.jsonl every N training steps (0: per-epoch lines only).
  std::int64_t step_metrics_every = 50;

  void validate() const;
};

// Knowledge distillation of a student from a frozen teacher of the same family.
struct DistillationOptions {
  bool enabled = false;
  std::filesystem::path teacher_path;  // a best.pt of the same model kind, teacher size
  double temperature = 4.0;
  double alpha = 0.7;  // weight of the teacher's term
  // The frozen teacher's outputs computed once per graph into a memory-mapped file in the run
  // directory, so that student training holds no teacher (train/caches/teacher_output_cache.hpp).
  bool teacher_cache = true;
  // Without the cache, on CUDA: keep the teacher's weights in pinned host memory and copy them to
  // the device for each forward pass.
  bool offload_teacher = false;

  void validate() const;
};

// Stage curriculum: which hard normal graphs join the attacks each epoch.
struct CurriculumOptions {
  std::filesystem::path autoencoder_path;  // VGAE that scores difficulty; default: this size's
  CurriculumSchedule schedule;

  void validate() const;
};

// Where the run reads and writes, on which device, and how it behaves as a process.
struct RunOptions {
  std::filesystem::path store;  // graph store to train on (required)
  std::string dataset;          // run-directory name; default: the store's name
  std::filesystem::path runs_dir = "runs";
  std::string device = "cpu";    // "cpu", "cuda" or "cuda:N"
  std::string precision = "32";  // "32", "bf16-mixed" (CPU, CUDA), "16-mixed" (CUDA)
  int threads = 0;               // intra-op threads on CPU; 0: all cores
  std::int64_t prefetch_depth = 4;
  std::uint64_t seed = 42;  // weights, shuffling, dropout, curriculum sampling
  bool progress = true;     // progress bar (drawn only on a terminal)
  bool resume = true;       // continue an interrupted run in the same directory
  // When another process holds the run directory's lock: fail at once naming it, or wait
  // (--wait-for-lock). How the run executes, not what it computes: not in config.json.
  util::WhenLocked when_locked = util::WhenLocked::kFail;

  void validate() const;
};

// Decisions: how a classifier stage calibrates its decision threshold on the validation split
// when it finishes (eval/decision_threshold.hpp; stored in best.pt), and what stage evaluation
// evaluates.
struct EvaluationOptions {
  // "f1": the F1-optimal threshold; "fpr": the lowest threshold with at most target_fpr false
  // alarms on the normal validation graphs; "none": decide at 0.5 only.
  std::string calibration = "f1";
  double target_fpr = 0.01;
  // Stage evaluation, per test split: a threshold set on its first N normal windows (a short
  // attack-free recording of the vehicle under test) at target_fpr, beside the others
  // (eval::VehicleCalibration). 0: off.
  std::int64_t vehicle_calibration_windows = 0;
  // Stage evaluation, per test split: a threshold set without labels on its first N windows
  // whatever their labels, at target_fpr among the scores inside a robust fence of fence_mads
  // spreads (eval::LabelFreeAdaptation, eval/label_free_threshold.hpp); the decision a deployment
  // on a new vehicle makes. 0: off.
  std::int64_t label_free_windows = 200;
  double label_free_fence_mads = eval::kDefaultFenceMads;
  // Stage evaluation also scores the classical baseline (baseline/store_baseline.hpp).
  bool baseline = true;
  // An autoencoder's anomaly score in evaluation: 0, its graph score (the mean node error, as it
  // trained); K > 0, the mean z of its K most anomalous nodes, each node's error read against
  // the normal validation graphs' nodes of its identity (train/stages/node_anomaly.hpp). 10: the
  // best measured on the conditions with unseen attacks (docs/detection.md).
  std::int64_t anomaly_top_nodes = 10;
  // Label-free, an autoencoder's BatchNorm statistics are re-estimated on the first half of each
  // test file's adaptation windows before its windows are scored (AdaBN,
  // train/stages/batch_norm_adaptation.hpp); its threshold is then set on the other half.
  bool label_free_batch_norm = false;
  // The classifiers to evaluate (run directories or best.pt files); default: every classifier
  // stage found in runs/{dataset}/.
  std::vector<std::filesystem::path> models;

  void validate() const;
};

// Stage fusion (train/fusion/fusion_stage.hpp): which classifier's and which VGAE's scores it
// fuses, and how it learns to.
struct FusionOptions {
  // "dqn": a Double DQN picks the classifier's weight per graph (upstream's fusion); "logistic": a
  // logistic regression on the same state.
  std::string method = "dqn";
  std::filesystem::path classifier_path;   // default: runs/{dataset}/student_curriculum_kd
  std::filesystem::path autoencoder_path;  // default: runs/{dataset}/student_autoencoder_kd
  // The DQN's discount of the next graph's value. Graphs are independent, so 0 (a contextual
  // bandit) is the default; upstream bootstraps from the next graph.
  double gamma = 0;
  // Share of the validation graphs held out of fitting to choose the best epoch.
  double holdout_fraction = 0.2;
  // Epochs over the fitting graphs (early stopping: optimisation.patience). An epoch takes
  // milliseconds, so it is not tied to the graph models' --max-epochs.
  std::int64_t max_epochs = 50;
  // A hybrid fusion: the classical baseline's window score (baseline/store_baseline.hpp) is one
  // more input beside the two models' signals, so that what only a per-vehicle profile of CAN IDs
  // and timing sees (an ID the vehicle never carries) reaches the fused score. Logistic only: the
  // DQN's fused score mixes the two models' scores alone. Run directory hybrid_{method}[...].
  bool with_baseline = false;

  void validate() const;
};

// Everything a training or evaluation stage reads, one option group per concern; each group has
// its defaults and its validation, and a function takes the groups it needs. Every field is a
// command-line flag and a TOML key (docs/configuration.md); config.json holds them flat.
struct TrainingConfig {
  Stage stage;  // set by whoever builds the configuration (a command, the pipeline)
  ModelOptions model;
  OptimisationOptions optimisation;
  MemoryOptions memory;
  DistillationOptions distillation;
  CurriculumOptions curriculum;
  RunOptions run;
  EvaluationOptions evaluation;
  FusionOptions fusion;
};

// The run directory, runs/{dataset}/{name}, its name the stage's (StageTraits::run_directory_name)
// so that what users train side by side in one --runs-dir never shares one:
// {size}_{stage}[_{family}][_kd] for the graph-model stages, `evaluation`,
// fusion_{method}[_{classifier}+{autoencoder}] (hybrid_{method}[...] with the baseline),
// node_{family}.
std::filesystem::path run_directory(const TrainingConfig& config);
// run_directory(config), after checking that it neither is, lies inside nor contains the store
// (throws std::runtime_error naming both): what a stage opens before it writes anything.
std::filesystem::path checked_run_directory(const TrainingConfig& config);
std::string dataset_name(const TrainingConfig& config);
// --learning-rate, else the stage's default, else the model family's for the size.
double effective_learning_rate(const TrainingConfig& config);

// The option groups every stage reads, then the stage's own checks (StageTraits::validate: a stage
// and a family that do not go together, distillation of a non-student, ...). Throws
// std::invalid_argument naming the flag.
void validate(const TrainingConfig& config);

void to_json(nlohmann::json& json, const TrainingConfig& config);

}  // namespace headroom::train
