#include "headroom/train/task/task_driver.hpp"

#include "headroom/train/context/command_budget.hpp"
#include "headroom/train/context/run_directory.hpp"

namespace headroom::train {

StageResult drive_task(const TrainingConfig& config, Task& task, const LoopHooks& hooks) {
  // Created once the task has opened its store and checked the configuration against it: input
  // that cannot train leaves no run directory behind.
  RunDirectory run(checked_run_directory(config), /*echo=*/true, config.run.when_locked);
  task.open(run);
  // Before the task's first probe: a probe the budget refuses is an answer, never a peak measured
  // over it.
  apply_command_budgets(config, task.context(), run);
  task.plan();
  TrainingTask& training = task.training();
  StageResult result;
  result.run_dir = run.path();
  result.outcome = run_budgeted_training(config, task.context(), run, training, hooks);
  task.finish(result);
  return result;
}

}  // namespace headroom::train
