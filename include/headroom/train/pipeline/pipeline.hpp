// The whole KD-GAT chain on one store: VGAE teacher -> GAT teacher (curriculum) -> VGAE student
// (distilled) -> GAT student (curriculum, distilled) -> fusion of the students' scores (DQN, and
// logistic regression) -> evaluation; and its summary table.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "headroom/train/config/training_config.hpp"
#include "headroom/train/evaluation/evaluation_stage.hpp"
#include "headroom/train/loop/stage_observer.hpp"
#include "headroom/train/loop/stage_result.hpp"
#include "headroom/train/loop/training_loop.hpp"

namespace headroom::train {

struct PipelineStage {
  std::string name;  // run-directory name, e.g. "teacher_autoencoder"
  StageResult result;
  double wall_seconds = 0;  // of this invocation (a finished stage that was reused: ~0)
};

struct PipelineResult {
  std::vector<PipelineStage> stages;
  EvaluationStageResult evaluation;
  double evaluation_wall_seconds = 0;
  double wall_seconds = 0;
  std::int64_t peak_rss_bytes = 0;
};

// Called after each stage that finished (trained or reused; not one skipped), in order, on the
// thread that runs the pipeline: `headroom run` records it in its run manifest.
using PipelineStageDone = std::function<void(const PipelineStage&)>;

// `base` supplies the store, run root, device, precision, epochs and so on; stage, model, size
// and distillation are set per stage. Every stage trains with `hooks` (a data-parallel job's);
// each stage, the evaluation included, runs between stage_started and stage_ended of every
// observer (stage_observer.hpp); `stage_done`, when set, hears of each finished training stage.
PipelineResult run_pipeline(const TrainingConfig& base, const LoopHooks& hooks = {},
                            const StageObservers& observers = {},
                            const PipelineStageDone& stage_done = {});

// Per test condition (test directory): its attack types (unseen ones marked), the best model's F1
// at the label-free decision and the baseline's; then per stage wall time and peak tensor memory,
// evaluation included. At most 100 columns wide; the full tables are evaluation.json's.
std::string render_pipeline_summary(const PipelineResult& result);

}  // namespace headroom::train
