// The graph task's batches (task_batch.hpp): whole graphs of a store collated into one
// disjoint-union graph (loader::GraphBatch); the ids are store graph ids. What every CAN stage
// trains on.
#pragma once

#include <functional>
#include <memory>
#include <span>

#include "headroom/loader/collate.hpp"
#include "headroom/loader/graph_batch.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/step/task_batch.hpp"

namespace headroom::train {

class GraphTaskBatch final : public TaskBatch {
 public:
  explicit GraphTaskBatch(loader::GraphBatch graphs) : graphs_(std::move(graphs)) {}

  const loader::GraphBatch& graphs() const { return graphs_; }

  std::vector<std::uint32_t> ids() const override { return graphs_.graph_id_list(); }
  double loss_weight(LossReduction reduction) const override;
  std::unique_ptr<TaskBatch> to(const c10::Device& device, bool non_blocking) const override;

 private:
  loader::GraphBatch graphs_;
};

// Collates graphs of `store` (which must outlive it) with `options` (pinning comes from build's
// argument).
class GraphBatchBuilder final : public BatchBuilder {
 public:
  explicit GraphBatchBuilder(const store::GraphStore& store, loader::CollateOptions options = {})
      : store_(store), options_(options) {}

  std::unique_ptr<TaskBatch> build(std::span<const std::uint32_t> ids,
                                   bool pin_memory) const override;
  const char* unit() const override { return "graph"; }

 private:
  const store::GraphStore& store_;
  loader::CollateOptions options_;
};

// The graph batch inside a task batch; throws std::logic_error for a batch of another task.
const loader::GraphBatch& graphs_of(const TaskBatch& batch);

// A loss over graph batches as the task's loss.
TaskLoss graph_task_loss(std::function<at::Tensor(const loader::GraphBatch&)> loss);

}  // namespace headroom::train
