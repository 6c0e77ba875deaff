// How the graph-classification task (classifier_task.hpp) judges its model on the validation
// graphs: each epoch's validation (the loss early stopping minimises, and the binary metrics of
// P(attack)), and after training the best checkpoint's decision threshold. Both run on every rank,
// each scoring its share of the graphs (batches/sharded_pass.hpp). Not thread-safe: call from the
// command's main thread.
#pragma once

#include <functional>
#include <optional>
#include <span>

#include <ATen/core/Tensor.h>

#include "headroom/loader/graph_batch.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/batches/inference_batching.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_context.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/loop/training_task.hpp"

namespace headroom::train::detail {

// The task's scalar loss on one batch (cross-entropy, or the distillation loss), with the
// classifier's logits in *logits_out when it is not null.
using ClassifierObjective =
    std::function<at::Tensor(const loader::GraphBatch& batch, at::Tensor* logits_out)>;

// The mean of `objective` over `validation_ids` as the result's loss; its metrics are the binary
// metrics of the attack log-odds at even odds, the loss, and the mean cross-entropy (which differs
// from the loss under distillation). A non-finite loss comes back without metrics, so that the
// epoch loop stops naming the loss. `batching` is planned within `limits` at the first call and
// kept, so that every epoch cuts (and folds) its batches alike.
ValidationResult validate_classifier(const store::GraphStore& store,
                                     std::span<const std::uint32_t> validation_ids,
                                     const InferenceLimits& limits,
                                     std::optional<InferenceBatching>& batching,
                                     const c10::Device& device,
                                     const ClassifierObjective& objective);

// Chooses the decision threshold of run's best.pt on `validation_ids` (graphs it did not train
// on) by config.evaluation.calibration, logs it, and stores it in best.pt. best.pt is rewritten
// only when the threshold changed, so that a finished run rerun leaves it (and the teacher caches
// keyed on its bytes) as it was; only the writing process writes.
void calibrate_best_decision(const TrainingConfig& config, const RunContext& context,
                             const store::GraphStore& store,
                             std::span<const std::uint32_t> validation_ids, RunDirectory& run);

}  // namespace headroom::train::detail
