// Stage `fusion` (fusion_stage.hpp) as a Task (task/task.hpp), run by drive_task as every trained
// stage is: the driver owns the run directory, the command's budgets, the epoch loop and the
// result it returns; the task owns scoring both models on the validation split (in the training's
// `prepare`, only when training remains, as a memory phase of its own), its learner, its
// validation on the held-out rows and its finish (the decision threshold stored in best.pt).
//
// Its learner trains its own epochs over the fitting rows (OwnEpochs: both learners' AdamW, and the
// DQN's acting, replay memory and target network between updates, are no TrainingStep), and the
// epoch loop validates on the held-out rows, keeps best.pt and last.pt, resumes, stops early and
// writes the metrics, as for every stage. Private to the fusion wing. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>

#include "fusion_fit_data.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_context.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/fusion/fusion_learner.hpp"
#include "headroom/train/fusion/fusion_scoring.hpp"
#include "headroom/train/loop/training_task.hpp"
#include "headroom/train/task/task.hpp"

namespace headroom::train {

class FusionTask final : public Task {
 public:
  // Opens config.run.store and resolves the run's context from it (a fusion runs its models for
  // inference only); `sources` are the two trained models it fuses, resolved by the stage.
  // `config` outlives this.
  FusionTask(const TrainingConfig& config, FusionSources sources);

  const RunContext& context() const override { return context_; }
  // Keeps `run`: what the stage fuses is logged once the validation split is scored.
  void open(RunDirectory& run) override { run_ = &run; }
  // Nothing to plan: the models are scored in the training's `prepare`.
  void plan() override {}
  TrainingTask& training() override;
  // Unless the run was finished before: the stage's peak becomes its highest phase (scoring both
  // models, usually, not the small learner), the best epoch's decision threshold is calibrated
  // into best.pt, and result.json is written again with that peak.
  void finish(StageResult& trained) override;

 private:
  void prepare();
  void score();
  FusionLearnerOptions learner_options() const;
  CheckpointInfo checkpoint_info() const;
  void calibrate(const TrainingOutcome& outcome);

  const TrainingConfig& config_;
  store::GraphStore store_;
  RunContext context_;  // resolved once, with the store open
  FusionSources sources_;
  RunDirectory* run_ = nullptr;             // the driver's, from open()
  FusionFitData data_;                      // scored in the training's prepare
  std::unique_ptr<FusionLearner> learner_;  // built there too
  std::int64_t scoring_peak_ = 0;
  TrainingTask training_;  // from training()
};

}  // namespace headroom::train
