// What a fusion fits on: both models' signals (and a hybrid's classical baseline score) on the
// store's validation split, graphs neither model trained on, split into the fitting rows and the
// held-out rows (--fusion-holdout) that choose the best epoch, as states scaled on the fitting
// rows only. Deterministic in (store, models, configuration): a resumed run computes the same.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "headroom/loader/epoch_order.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_context.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/fusion/fusion_features.hpp"
#include "headroom/train/fusion/fusion_learner.hpp"
#include "headroom/train/fusion/fusion_scoring.hpp"

namespace headroom::train {

struct FusionFitData {
  std::vector<std::uint8_t> validation_labels;  // per validation graph, in validation_ids order
  std::vector<std::uint8_t> holdout_labels;     // per held-out row, in `holdout` order
  FusionScaling scaling;                        // fitted on the fitting rows' normal graphs
  FusionData all;                               // every validation graph
  FusionData fit;                               // the rows the learner trains on
  FusionData holdout;                           // the rows that choose the best epoch
};

// Scores the validation split of `store` (whose labels are `validation_labels`, both classes
// present) with both models of `sources` on `context`'s device and precision, and splits it by the
// run's seed, as epoch 0 of its own order stream. Logs what a hybrid adds to `run`. Throws as
// loading the checkpoints does.
FusionFitData score_fusion_fit_data(const TrainingConfig& config, const store::GraphStore& store,
                                    const RunContext& context, const FusionSources& sources,
                                    std::vector<std::uint8_t> validation_labels, RunDirectory& run);

// The epoch order of `count` rows (loader/epoch_order) as int64 row indices [count], for slicing
// and index_select: the split above, and each fusion epoch's visiting order.
at::Tensor row_order(std::int64_t count, std::uint64_t seed, std::int64_t epoch,
                     loader::OrderStream stream);

}  // namespace headroom::train
