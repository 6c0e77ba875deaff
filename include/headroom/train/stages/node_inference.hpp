// How the node task reads its model's output over the graph without autograd, within its memory
// plan (node_stage_plan.hpp): with full batches, the whole graph's forward over the normalised
// adjacency on the training device; with sampled steps (the full batch does not fit), the same in
// row blocks whose activations stay within what a sampled step was planned to hold, halved
// whenever a pass runs out of memory, as the OOM guard splits a step.
// Views the store's mapping: the store outlives it. Not thread-safe.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <optional>

#include "headroom/models/node_model.hpp"
#include "headroom/nn/sparse_adjacency.hpp"
#include "headroom/store/node_graph_store.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/stages/node_stage_plan.hpp"

namespace headroom::train {

class NodeInference {
 public:
  // Rows of hidden activations a sampled pass holds at once, at first.
  static constexpr std::int64_t kInferenceRows = 4096;

  // `plan` is copied; `run` (for the log line when blocks are halved) outlives this.
  NodeInference(const store::NodeGraphStore& store, const NodeStagePlan& plan,
                const c10::Device& device, RunDirectory& run);

  bool sampled() const { return plan_.sampled.has_value(); }

  // The normalised adjacency: a view of the store's mapping, moved to the training device for full
  // batches (sampled passes move a block's rows at a time). Built at the first call.
  const nn::SparseAdjacency& adjacency();

  // Logits of every node ([nodes, outputs]); call in eval mode without grad when sampled.
  at::Tensor every_node(models::NodeModelImpl& model);

  // Logits of the nodes `ids` (int64 [K] on the host) in their order: sampled, from their
  // neighbourhood's hidden rows alone; full batch, the whole graph's forward read at those rows
  // (its first layer is the next step's: NodeGcnImpl's memo).
  at::Tensor rows(models::NodeModelImpl& model, const at::Tensor& ids);

 private:
  models::InferenceBlocks first_blocks() const;
  template <typename Pass>
  at::Tensor with_fitting_blocks(Pass pass);

  const store::NodeGraphStore& store_;
  NodeStagePlan plan_;
  c10::Device device_;
  RunDirectory& run_;
  std::optional<models::InferenceBlocks> blocks_;  // sampled: the blocks that fit
  std::optional<nn::SparseAdjacency> adjacency_;
};

}  // namespace headroom::train
