// A stage as the commands and the pipeline see it: its traits (what the configuration knows of it,
// config/stage.hpp), how it runs, how its training step is prepared for the memory probes, and its
// command's example. A stage's file defines its StageDefinition; one line in the stage registry
// (train/pipeline/stage_registry.cpp) makes it a `headroom` command, with the flags of the option
// groups it reads, and lets `plan`, the benchmarks and the Python bindings find it.
//
// Definitions are constants with static storage; read-only, thread-safe.
#pragma once

#include <memory>
#include <string_view>

#include "headroom/train/config/training_config.hpp"
#include "headroom/train/loop/stage_result.hpp"
#include "headroom/train/loop/training_loop.hpp"
#include "headroom/train/stages/prepared_stage.hpp"

namespace headroom::train {

struct StageDefinition {
  const StageTraits* traits = nullptr;
  // Trains (or resumes, or recognises as complete) and writes the run directory. `hooks` carry
  // the job's collectives and the trackers' metric sinks.
  StageResult (*run)(const TrainingConfig& config, const LoopHooks& hooks) = nullptr;
  // The stage's training step prepared as run() prepares it, for the memory probes; nullptr for a
  // stage without a graph training step.
  std::unique_ptr<PreparedStage> (*prepare)(const TrainingConfig& config) = nullptr;
  // False for a stage that writes results without training a model (evaluation): its command
  // reports where they are instead of how training went.
  bool trains = true;
  // The `headroom NAME` command's --help footer; empty for a stage without a command of its own
  // (node: `headroom run CORPUS` runs it).
  std::string_view example = {};
};

}  // namespace headroom::train
