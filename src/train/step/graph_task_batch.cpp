#include "headroom/train/step/graph_task_batch.hpp"

#include <stdexcept>

namespace headroom::train {

double GraphTaskBatch::loss_weight(LossReduction reduction) const {
  return static_cast<double>(reduction == LossReduction::kPerGraph ? graphs_.num_graphs
                                                                   : graphs_.num_nodes);
}

std::unique_ptr<TaskBatch> GraphTaskBatch::to(const c10::Device& device, bool non_blocking) const {
  return std::make_unique<GraphTaskBatch>(graphs_.to(device, non_blocking));
}

std::unique_ptr<TaskBatch> GraphBatchBuilder::build(std::span<const std::uint32_t> ids,
                                                    bool pin_memory) const {
  loader::CollateOptions options = options_;
  options.pin_memory = pin_memory;
  return std::make_unique<GraphTaskBatch>(loader::collate(store_, ids, options));
}

const loader::GraphBatch& graphs_of(const TaskBatch& batch) {
  const auto* graph_batch = dynamic_cast<const GraphTaskBatch*>(&batch);
  if (graph_batch == nullptr)
    throw std::logic_error("a graph task's loss was given a batch of another task");
  return graph_batch->graphs();
}

TaskLoss graph_task_loss(std::function<at::Tensor(const loader::GraphBatch&)> loss) {
  return [loss = std::move(loss)](const TaskBatch& batch) { return loss(graphs_of(batch)); };
}

}  // namespace headroom::train
