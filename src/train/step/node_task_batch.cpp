#include "headroom/train/step/node_task_batch.hpp"

#include <torch/torch.h>

#include <stdexcept>
#include <string>

namespace headroom::train {

std::vector<std::uint32_t> NodeTaskBatch::ids() const {
  const auto host = host_nodes_.defined() ? host_nodes_ : nodes_.cpu();
  const auto* data = host.data_ptr<std::int64_t>();
  return {data, data + host.numel()};
}

std::unique_ptr<TaskBatch> NodeTaskBatch::to(const c10::Device& device, bool non_blocking) const {
  if (nodes_.device() == device) return std::make_unique<NodeTaskBatch>(*this);
  auto moved = std::make_unique<NodeTaskBatch>(nodes_.to(device, non_blocking),
                                               labels_.to(device, non_blocking));
  moved->host_nodes_ = host_nodes_.defined() ? host_nodes_ : nodes_;
  return moved;
}

std::unique_ptr<TaskBatch> NodeBatchBuilder::build(std::span<const std::uint32_t> ids,
                                                   bool pin_memory) const {
  const auto count = static_cast<std::int64_t>(ids.size());
  auto options = torch::TensorOptions().dtype(torch::kInt64).pinned_memory(pin_memory);
  auto nodes = torch::empty({count}, options);
  auto labels = torch::empty({count}, options);
  auto* node_data = nodes.data_ptr<std::int64_t>();
  auto* label_data = labels.data_ptr<std::int64_t>();
  const auto store_labels = store_.node_label();
  for (std::int64_t i = 0; i < count; ++i) {
    const auto node = ids[static_cast<std::size_t>(i)];
    if (node >= store_labels.size())
      throw std::invalid_argument("node batch: node " + std::to_string(node) +
                                  " is outside the graph of " +
                                  std::to_string(store_labels.size()) + " nodes");
    if (store_labels[node] == store::kNoLabel)
      throw std::invalid_argument("node batch: node " + std::to_string(node) + " has no label");
    node_data[i] = node;
    label_data[i] = store_labels[node];
  }
  return std::make_unique<NodeTaskBatch>(std::move(nodes), std::move(labels));
}

const NodeTaskBatch& nodes_of(const TaskBatch& batch) {
  const auto* node_batch = dynamic_cast<const NodeTaskBatch*>(&batch);
  if (node_batch == nullptr)
    throw std::logic_error("a node task's loss was given a batch of another task");
  return *node_batch;
}

}  // namespace headroom::train
