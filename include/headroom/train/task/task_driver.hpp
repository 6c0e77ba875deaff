// The one path every task kind (task.hpp) takes from a configuration to a trained and evaluated
// stage: the run directory, the command's budgets applied before the task's first probe
// (context/command_budget.hpp), the task's plan, training through the shared epoch loop
// (training_loop.hpp: resume, the OOM guard, checkpoints, metrics, `hooks`), then the task's
// evaluation. Adding a task kind changes nothing here.
// Not thread-safe: the budgets are process-wide; call from the command's main thread.
#pragma once

#include "headroom/train/config/training_config.hpp"
#include "headroom/train/loop/stage_result.hpp"
#include "headroom/train/loop/training_loop.hpp"
#include "headroom/train/task/task.hpp"

namespace headroom::train {

// Runs (or resumes, or recognises as complete, then evaluates) `task` in config's run directory.
// Throws what the task, the budgets or the loop throw: a host plan that does not fit, a plan that
// nothing fits, a run directory another process holds.
StageResult drive_task(const TrainingConfig& config, Task& task, const LoopHooks& hooks = {});

}  // namespace headroom::train
