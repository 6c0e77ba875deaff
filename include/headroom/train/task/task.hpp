// One run of one task kind, as the task driver (task_driver.hpp) runs it. A task owns what differs
// between task kinds: how its store is read (and so the run's context: the host plan depends on
// it), how a batch is formed, the model's output and loss, probing, planned inference, evaluation
// and the result it writes. The driver owns what does not: the run directory, the command's
// budgets applied before the first probe, training through the shared epoch loop (resume, the OOM
// guard, checkpoints, metrics, tracking hooks).
//
// Nothing here names a label or a metric: the loss, the validation metrics and the evaluation are
// the task's, so a regression task implements the same five calls as a classification one. A new
// task kind is a class implementing Task and a stage definition that builds it and hands it to
// drive_task (docs/architecture.md, "Adding a task kind").
//
// The driver calls, in order: context() (any time), open(), plan(), training(), finish(). Not
// thread-safe: a task runs on the command's main thread.
#pragma once

#include "headroom/train/context/run_context.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/loop/stage_result.hpp"
#include "headroom/train/loop/training_task.hpp"

namespace headroom::train {

class Task {
 public:
  virtual ~Task() = default;

  // The run's device, precision, host plan and device budget, resolved when the task was built
  // from its store; not applied (the driver applies them).
  virtual const RunContext& context() const = 0;

  // Called once the run directory exists and is locked, before the budgets are applied. `run` is
  // owned by the driver and outlives every later call: the task keeps it, and logs what it will
  // train.
  virtual void open(RunDirectory& run) = 0;

  // Called once the command's budgets are applied, whether or not training remains (a finished
  // run is still evaluated): the task probes and plans its steps and its inference here, every
  // probe held to the budget. Throws std::runtime_error, saying why, when nothing fits.
  virtual void plan() = 0;

  // The epoch loop's view of the task (training_task.hpp), built after plan() and owned by the
  // task: its callbacks may refer to the task, which outlives training, and its `prepare` may
  // settle what it trains (a graph task's checkpointing choice changes the configuration its
  // checkpoints record).
  virtual TrainingTask& training() = 0;

  // Called after training, or once a finished run was recognised, still within the budgets:
  // evaluates the best checkpoint and writes what the task reports into the run directory (only
  // the writing process writes: util/process_role.hpp). May complete `trained`, which the driver
  // returns, with what the loop did not see (fusion: the peak of scoring its models in `prepare`).
  virtual void finish(StageResult& trained) = 0;
};

}  // namespace headroom::train
