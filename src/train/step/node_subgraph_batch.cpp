#include "headroom/train/step/node_subgraph_batch.hpp"

#include <torch/torch.h>

#include <stdexcept>
#include <string>

namespace headroom::train {
namespace {

template <typename T>
at::Tensor view_of(const std::vector<T>& values, at::ScalarType type) {
  return torch::from_blob(const_cast<T*>(values.data()), {static_cast<std::int64_t>(values.size())},
                          torch::TensorOptions().dtype(type));
}

}  // namespace

store::NodeSubgraph sampled_subgraph(const store::NodeGraphStore& store,
                                     std::span<const std::uint32_t> nodes) {
  auto subgraph = store::induced_subgraph(store, nodes);
  const auto total = static_cast<double>(store.num_nodes());
  const auto chosen = static_cast<double>(nodes.size());
  if (chosen < 2 || chosen >= total) return subgraph;
  const auto scale = static_cast<float>((total - 1) / (chosen - 1));
  for (std::size_t row = 0; row + 1 < subgraph.row_offsets.size(); ++row) {
    for (auto e = subgraph.row_offsets[row]; e < subgraph.row_offsets[row + 1]; ++e) {
      const auto entry = static_cast<std::size_t>(e);
      if (static_cast<std::size_t>(subgraph.columns[entry]) != row)
        subgraph.weights[entry] *= scale;
    }
  }
  return subgraph;
}

NodeSubgraphBatch::NodeSubgraphBatch(std::vector<std::uint32_t> part,
                                     std::shared_ptr<const store::NodeSubgraph> subgraph)
    : part_(std::move(part)), subgraph_(std::move(subgraph)) {
  if (static_cast<std::int64_t>(part_.size()) != subgraph_->num_nodes())
    throw std::invalid_argument("sampled batch: one id per subgraph node is needed");
  adjacency_ = nn::SparseAdjacency(view_of(subgraph_->row_offsets, torch::kInt64),
                                   view_of(subgraph_->columns, torch::kInt32),
                                   view_of(subgraph_->weights, torch::kFloat32),
                                   /*symmetric=*/true);
  node_ids_ = torch::tensor(std::vector<std::int64_t>(part_.begin(), part_.end()), torch::kInt64);
  std::vector<std::int64_t> seeds;
  std::vector<std::int64_t> labels;
  for (std::size_t i = 0; i < subgraph_->splits.size(); ++i) {
    if (subgraph_->splits[i] != static_cast<std::uint8_t>(store::NodeSplit::kTrain)) continue;
    if (subgraph_->labels[i] == store::kNoLabel)
      throw std::invalid_argument("sampled batch: training node " + std::to_string(part_[i]) +
                                  " has no label");
    seeds.push_back(static_cast<std::int64_t>(i));
    labels.push_back(subgraph_->labels[i]);
  }
  seeds_ = torch::tensor(seeds, torch::kInt64);
  labels_ = torch::tensor(labels, torch::kInt64);
}

std::unique_ptr<TaskBatch> NodeSubgraphBatch::to(const c10::Device& device,
                                                 bool non_blocking) const {
  std::unique_ptr<NodeSubgraphBatch> moved(new NodeSubgraphBatch);
  moved->part_ = part_;
  moved->subgraph_ = subgraph_;
  moved->adjacency_ = adjacency_.to(device);
  moved->node_ids_ = node_ids_.to(device, non_blocking);
  moved->seeds_ = seeds_.to(device, non_blocking);
  moved->labels_ = labels_.to(device, non_blocking);
  return moved;
}

std::unique_ptr<TaskBatch> NodeSubgraphBuilder::build(std::span<const std::uint32_t> ids,
                                                      bool) const {
  auto subgraph = std::make_shared<const store::NodeSubgraph>(sampled_subgraph(store_, ids));
  return std::make_unique<NodeSubgraphBatch>(std::vector<std::uint32_t>(ids.begin(), ids.end()),
                                             std::move(subgraph));
}

at::Tensor sampled_node_loss(models::NodeModelImpl& model, const TaskBatch& batch) {
  const auto& sampled = subgraph_of(batch);
  const auto logits = model.forward_on(sampled.adjacency(), sampled.node_ids());
  if (sampled.seeds().numel() == 0) return logits.sum() * 0;
  return torch::nn::functional::cross_entropy(logits.index_select(0, sampled.seeds()),
                                              sampled.labels());
}

const NodeSubgraphBatch& subgraph_of(const TaskBatch& batch) {
  const auto* sampled = dynamic_cast<const NodeSubgraphBatch*>(&batch);
  if (sampled == nullptr)
    throw std::logic_error("a sampled node step was given a batch of another kind");
  return *sampled;
}

}  // namespace headroom::train
