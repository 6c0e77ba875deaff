// The node task's batches (task_batch.hpp): seed nodes of one big graph (a node-graph store), with
// their labels: the rows the loss reads. How much of the graph a step computes over is the
// model's: full-batch training runs the whole graph and reads the seeds' rows of its output.
#pragma once

#include <memory>
#include <span>

#include "headroom/store/node_graph_store.hpp"
#include "headroom/train/step/task_batch.hpp"

namespace headroom::train {

class NodeTaskBatch final : public TaskBatch {
 public:
  // `nodes` int64 [k] node ids, `labels` int64 [k] their classes, on one device.
  NodeTaskBatch(at::Tensor nodes, at::Tensor labels)
      : nodes_(std::move(nodes)), labels_(std::move(labels)) {}

  const at::Tensor& nodes() const { return nodes_; }
  const at::Tensor& labels() const { return labels_; }

  std::vector<std::uint32_t> ids() const override;
  // Its seed nodes, whatever the reduction: the loss averages over the labelled rows it reads.
  double loss_weight(LossReduction) const override { return static_cast<double>(nodes_.numel()); }
  std::unique_ptr<TaskBatch> to(const c10::Device& device, bool non_blocking) const override;

 private:
  at::Tensor nodes_;
  at::Tensor labels_;
  at::Tensor host_nodes_;  // the ids on the host when the batch moved to a device
};

// Builds seed batches of `store` (which must outlive it); every seed must have a label.
class NodeBatchBuilder final : public BatchBuilder {
 public:
  explicit NodeBatchBuilder(const store::NodeGraphStore& store) : store_(store) {}

  // Throws std::invalid_argument naming a seed outside the graph or without a label.
  std::unique_ptr<TaskBatch> build(std::span<const std::uint32_t> ids,
                                   bool pin_memory) const override;
  const char* unit() const override { return "node"; }

 private:
  const store::NodeGraphStore& store_;
};

// The node batch inside a task batch; throws std::logic_error for a batch of another task.
const NodeTaskBatch& nodes_of(const TaskBatch& batch);

}  // namespace headroom::train
