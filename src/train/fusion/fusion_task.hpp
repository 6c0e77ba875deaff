// A fusion as a training task (loop/training_task.hpp): its learner trains its own epochs over the
// fitting rows (OwnEpochs: both learners' AdamW, and the DQN's acting, replay memory and target
// network between updates, are no TrainingStep), and the epoch loop validates on the held-out
// rows, keeps best.pt and last.pt, resumes, stops early and writes the metrics, as for every
// stage.
#pragma once

#include <cstdint>

#include "fusion_fit_data.hpp"
#include "headroom/train/fusion/fusion_learner.hpp"
#include "headroom/train/loop/training_task.hpp"

namespace headroom::train {

// Makes `task` the training of `learner` on `data` with the run's `seed`: its model, own epochs and
// validation; the data identity, the checkpoint record and `prepare` stay the caller's. Keeps
// references to `learner` and `data`, which must outlive the task. Epoch e visits the fitting rows
// in the epoch order of stream kFusionEpochs and draws every other random number from a generator
// of its own, seeded by (seed, e): a resumed epoch draws what it would have.
void train_fusion_in(TrainingTask& task, FusionLearner& learner, const FusionFitData& data,
                     std::uint64_t seed);

}  // namespace headroom::train
