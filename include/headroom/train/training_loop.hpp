// The epoch loop shared by every training stage: batches from a background prefetcher, Adam with
// weight decay, gradient clipping, optional autocast and loss scaling, validation, early stopping
// on validation loss, the best checkpoint, and a resumable state written after every epoch.
// A stage supplies what differs (which graphs an epoch trains on, the loss, the validation) as a
// TrainingTask.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/loader/graph_batch.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/model_checkpoint.hpp"
#include "headroom/train/oom_guard.hpp"
#include "headroom/train/run_directory.hpp"
#include "headroom/train/training_config.hpp"
#include "headroom/train/training_step.hpp"

namespace headroom::train {

struct EpochPlan {
  std::vector<std::vector<std::uint32_t>> batches;  // graph ids of each training batch, in order
  nlohmann::json info = nlohmann::json::object();   // recorded in the epoch's metrics line
};

struct ValidationResult {
  double loss = 0;  // what early stopping minimises
  nlohmann::json metrics = nlohmann::json::object();
};

struct TrainingTask {
  const store::GraphStore* store = nullptr;  // not owned; outlives run_training
  std::shared_ptr<torch::nn::Module> model;  // saved as best.pt
  CheckpointInfo checkpoint;                 // kind and model configuration for best.pt
  // Further trained modules (e.g. a distillation projection): optimised and resumed with the
  // model, not part of best.pt.
  std::vector<std::shared_ptr<torch::nn::Module>> auxiliary;
  // Called once, only when there is training to do (not for a finished run), before the memory
  // budget is applied and before the first epoch: where a stage measures its step's memory and
  // builds what its epochs need, outside any epoch's peak. May be empty.
  std::function<void()> prepare;
  // Deterministic in (configuration, epoch): a resumed run must plan the same epochs.
  std::function<EpochPlan(std::int64_t epoch)> plan_epoch;
  // The scalar loss of one batch, already on the training device. Called in training mode,
  // inside autocast when configured.
  std::function<at::Tensor(const loader::GraphBatch&)> loss;
  // How `loss` averages, so that micro-batches after an OOM are weighted right (oom_guard.hpp).
  LossReduction loss_reduction = LossReduction::kPerGraph;
  // Called in eval mode without grad after every epoch.
  std::function<ValidationResult()> validate;
};

struct TrainingOutcome {
  std::int64_t epochs = 0;  // epochs completed
  std::int64_t best_epoch = -1;
  double best_validation_loss = 0;
  bool early_stopped = false;
  std::int64_t resumed_after = 0;      // epochs restored from last.pt (0: fresh start)
  bool already_complete = false;       // the run directory held a finished run with this config
  double seconds = 0;                  // training wall time of this invocation
  double batch_wait_seconds = 0;       // time steps waited for a collated batch, summed
  double graphs_per_second = 0;        // training graphs per second of training-step time
  std::int64_t peak_tensor_bytes = 0;  // highest per-epoch peak (CPU counting allocator or CUDA)
  nlohmann::json best_metrics;         // the validation metrics of the best epoch
};
void to_json(nlohmann::json& json, const TrainingOutcome& outcome);
void from_json(const nlohmann::json& json, TrainingOutcome& outcome);

class MetricsSink;

// Where a run reaches beyond one process and one metrics file. All optional: the defaults are
// single-process training that writes metrics.jsonl only.
struct LoopHooks {
  // Further sinks for every metric line, after metrics.jsonl (not owned; outlive the run).
  std::vector<MetricsSink*> metrics;
  // Called by every training step after backward, before unscaling and clipping: where
  // data-parallel training averages gradients across processes (training_step.hpp).
  GradientHook after_backward;
};

// Runs (or resumes, or recognises as complete) the training described by `task` in `run`: each
// step is a TrainingStep over task.loss, each epoch's line goes to metrics.jsonl and to
// `hooks.metrics`. Only the process that writes (util/process_role.hpp) writes files or metrics.
// Throws std::runtime_error when the run directory holds a run with a different configuration
// and config.run.resume is set.
TrainingOutcome run_training(const TrainingConfig& config, RunDirectory& run, TrainingTask& task,
                             const LoopHooks& hooks = {});

// The outcome stored in `run` when it holds this configuration's finished run on a store with
// the identity of `store` (store::content_identity) and config.run.resume is set, else nullopt.
// Throws std::runtime_error when `run` holds a run with a different configuration or one on a
// different store, naming each key that differs with both values ("store.window (was 100, now
// 50)"). What every stage asks before it trains.
std::optional<TrainingOutcome> finished_training(const TrainingConfig& config, RunDirectory& run,
                                                 const store::GraphStore& store);
// Whether `run` holds an interrupted run (last.pt and config.json) to continue.
bool resumable_training(const TrainingConfig& config, const RunDirectory& run);
// config.json: the configuration, and the part of it a resumed run must agree with (with the
// identity of the store it trains on).
void record_training_config(const TrainingConfig& config, const RunDirectory& run,
                            const store::GraphStore& store);

// The device named by run.device; throws std::runtime_error when CUDA is asked for and
// absent.
c10::Device training_device(const RunOptions& run);
// The training memory budget in bytes: memory.budget, or when it is 0 the device's total
// memory (CUDA) or, on CPU, what the host memory budget leaves after the process's own memory
// (train/host_memory.hpp). Throws std::invalid_argument when memory.host_budget exceeds the
// detected host limit.
std::int64_t resolve_memory_budget(const MemoryOptions& memory, const c10::Device& device);
// Applies run.threads to LibTorch's intra-op pool.
void apply_thread_count(const RunOptions& run);

// Runs `fn` on every batch of `graph_ids` (in order, `batch_size` graphs each), collated in the
// background and moved to `device`. A batch whose `fn` runs out of memory is redone in halves
// (recursively), so `fn` must only commit its results once it has computed them. Returns the
// seconds spent waiting for batches.
double for_each_batch(const store::GraphStore& store, std::span<const std::uint32_t> graph_ids,
                      std::int64_t batch_size, const c10::Device& device,
                      const std::function<void(const loader::GraphBatch&)>& fn,
                      std::size_t prefetch_depth = 4);

}  // namespace headroom::train
