// The node task's sampled batches: when one big graph's full-batch step does not fit the memory
// budget, each step trains on the subgraph induced by a random part of the graph's nodes
// (GraphSAINT's node sampler; Zeng et al., ICLR 2020) and its loss reads the training nodes among
// them. The epoch cuts a random permutation of every node into parts, so each node is in exactly
// one step per epoch (train/stages/node_classifier_stage.cpp).
//
// Normalisation: a part of n of the graph's N nodes keeps a neighbour of a chosen node with
// probability p = (n - 1) / (N - 1), so its off-diagonal weights are divided by p — GraphSAINT's
// aggregator normalisation, under which a node's sampled aggregation has the full graph's as its
// expectation. Self-loops are always kept and stay as stored.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "headroom/models/node_model.hpp"
#include "headroom/nn/sparse_adjacency.hpp"
#include "headroom/store/node_graph_store.hpp"
#include "headroom/store/node_subgraph.hpp"
#include "headroom/train/step/task_batch.hpp"

namespace headroom::train {

// The subgraph induced by `nodes` (ascending) of `store`, normalised as above for a part of
// nodes.size() of its nodes. Host memory; pure and thread-safe.
store::NodeSubgraph sampled_subgraph(const store::NodeGraphStore& store,
                                     std::span<const std::uint32_t> nodes);

class NodeSubgraphBatch final : public TaskBatch {
 public:
  // `part`: the whole graph's ids of the subgraph's nodes, ascending; `subgraph` induced by them.
  NodeSubgraphBatch(std::vector<std::uint32_t> part,
                    std::shared_ptr<const store::NodeSubgraph> subgraph);

  // The part's nodes (micro-batches after an out-of-memory error are smaller parts).
  std::vector<std::uint32_t> ids() const override { return part_; }
  // Its training nodes: the loss averages over them.
  double loss_weight(LossReduction) const override { return static_cast<double>(seeds_.numel()); }
  std::unique_ptr<TaskBatch> to(const c10::Device& device, bool non_blocking) const override;

  // n × n, on the batch's device (on the host, views of the subgraph's arrays).
  const nn::SparseAdjacency& adjacency() const { return adjacency_; }
  const at::Tensor& node_ids() const { return node_ids_; }  // int64 [n]: the whole graph's ids
  const at::Tensor& seeds() const { return seeds_; }        // int64 [s]: subgraph ids, training
  const at::Tensor& labels() const { return labels_; }      // int64 [s]: the seeds' classes

 private:
  NodeSubgraphBatch() = default;

  std::vector<std::uint32_t> part_;
  std::shared_ptr<const store::NodeSubgraph> subgraph_;  // what a host adjacency views
  nn::SparseAdjacency adjacency_;
  at::Tensor node_ids_;
  at::Tensor seeds_;
  at::Tensor labels_;
};

// Builds sampled batches of `store` (which must outlive it) from parts of its nodes; ids must be
// ascending (std::invalid_argument otherwise).
class NodeSubgraphBuilder final : public BatchBuilder {
 public:
  explicit NodeSubgraphBuilder(const store::NodeGraphStore& store) : store_(store) {}
  std::unique_ptr<TaskBatch> build(std::span<const std::uint32_t> ids,
                                   bool pin_memory) const override;
  const char* unit() const override { return "node"; }

 private:
  const store::NodeGraphStore& store_;
};

// A sampled step's loss: the cross-entropy of `model`'s logits on the batch's subgraph over its
// training nodes (0, still attached to the model, for a part without one). Shared by the stage
// and the planner's probes, so that both measure one step.
at::Tensor sampled_node_loss(models::NodeModelImpl& model, const TaskBatch& batch);

// The sampled batch inside a task batch; throws std::logic_error for a batch of another kind.
const NodeSubgraphBatch& subgraph_of(const TaskBatch& batch);

}  // namespace headroom::train
