// What stage `geometric` (geometric_stage.hpp) predicts of a geometric store's graphs, and how a
// split is scored beside its baseline: classification when the store has no graph target (the
// synthetic trees' labels: cross-entropy, accuracy, beside the training split's majority class),
// regression when it has one (QM9's HOMO-LUMO gap: L1 on the target standardised by the training
// split's mean and deviation, the MAE in the target's unit, beside the training split's mean).
// Private to the stages wing. Read-only once built; scoring is not thread-safe (the model is not).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include "headroom/loader/graph_batch.hpp"
#include "headroom/models/sgmp.hpp"
#include "headroom/store/graph_store.hpp"

namespace headroom::train::detail {

struct GeometricTarget {
  bool regression = false;
  std::int64_t classes = 0;   // classification: 1 + the largest training label
  std::int64_t majority = 0;  // classification: the training split's most frequent class
  double mean = 0;            // regression: the training split's mean and deviation, in `unit`
  double deviation = 1;
  std::string name;  // regression: the store's target name and unit
  std::string unit;

  // From `store`'s training split. Throws std::runtime_error naming the store when it has no
  // training graphs, or (classification) fewer than two classes among them.
  static GeometricTarget of(const store::GraphStore& store);

  std::int64_t outputs() const { return regression ? 1 : classes; }
  // The training loss of the model's outputs [num_graphs, outputs()] for `batch`.
  at::Tensor loss(const at::Tensor& outputs, const loader::GraphBatch& batch) const;
  // "accuracy" or "mae".
  const char* metric_name() const { return regression ? "mae" : "accuracy"; }
  // "graph classification" or "graph regression"; what it predicts, for the log.
  const char* task_name() const { return regression ? "graph regression" : "graph classification"; }
  std::string describe() const;
  nlohmann::json to_json() const;  // recorded in best.pt's model configuration
};

// One split scored: the model's metric and the baseline's on the same graphs.
struct GeometricScore {
  std::size_t graphs = 0;
  double loss = 0;      // the training loss's mean over the graphs
  double metric = 0;    // accuracy, or MAE in the target's unit
  double baseline = 0;  // the majority class's accuracy, or the training mean's MAE
};

// What the encoder reads of a collated batch.
models::GeometricBatch geometric_batch(const loader::GraphBatch& batch);

// Scores `model` (in eval mode, on `device`) on the graphs `ids` of `store`, in batches of
// `batch_size` graphs (halved on OOM: train/batches/inference_batches.hpp), without gradients.
GeometricScore score_geometric(models::Sgmp& model, const store::GraphStore& store,
                               std::span<const std::uint32_t> ids, const GeometricTarget& target,
                               std::int64_t batch_size, const c10::Device& device);

// evaluation.json's entry of one split: the metric and, beside it, the baseline.
nlohmann::json score_json(const GeometricScore& score, const GeometricTarget& target);

}  // namespace headroom::train::detail
