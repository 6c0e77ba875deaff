// The epoch loop shared by every training stage: batches from a background prefetcher, Adam with
// weight decay, gradient clipping, optional autocast and loss scaling, validation, early stopping
// on validation loss, the best checkpoint, and a resumable state written after every epoch.
// A stage supplies what differs (which graphs an epoch trains on, the loss, the validation) as a
// TrainingTask (training_task.hpp); resuming and recognising a finished run are run_resume.hpp's.
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
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_context.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/loop/run_resume.hpp"
#include "headroom/train/loop/training_outcome.hpp"
#include "headroom/train/loop/training_task.hpp"
#include "headroom/train/step/oom_guard.hpp"
#include "headroom/train/step/training_step.hpp"

namespace headroom::train {

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

// Runs (or resumes, or recognises as complete) the training described by `task` in `run`, on
// `context`'s device within its budgets, which the caller has applied (context/command_budget.hpp:
// apply_command_budgets) before anything it probes or plans, and before `task.prepare`: each step
// is a TrainingStep over task.loss, each epoch's line goes to metrics.jsonl and to
// `hooks.metrics`. Only the process that writes (util/process_role.hpp) writes files or metrics.
// Throws std::runtime_error when the run directory holds a run with a different configuration
// and config.run.resume is set. Every trained stage reaches it through the task driver
// (task/task_driver.hpp: drive_task).
TrainingOutcome run_budgeted_training(const TrainingConfig& config, const RunContext& context,
                                      RunDirectory& run, TrainingTask& task,
                                      const LoopHooks& hooks = {});

}  // namespace headroom::train
