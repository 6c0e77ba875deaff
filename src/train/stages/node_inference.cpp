#include "headroom/train/stages/node_inference.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <algorithm>

#include "headroom/models/node_model_kind.hpp"

namespace headroom::train {
namespace {

// A tensor viewing a mapped store array: no copy, never written (the mapping is read-only).
template <typename T>
at::Tensor view_of(std::span<const T> values, at::ScalarType type) {
  return torch::from_blob(const_cast<T*>(values.data()), {static_cast<std::int64_t>(values.size())},
                          torch::TensorOptions().dtype(type));
}

}  // namespace

NodeInference::NodeInference(const store::NodeGraphStore& store, const NodeStagePlan& plan,
                             const c10::Device& device, RunDirectory& run)
    : store_(store), plan_(plan), device_(device), run_(run) {}

const nn::SparseAdjacency& NodeInference::adjacency() {
  if (!adjacency_) {
    nn::SparseAdjacency mapped(view_of(store_.row_offsets(), torch::kInt64),
                               view_of(store_.column_index(), torch::kInt32),
                               view_of(store_.edge_weight(), torch::kFloat32),
                               /*symmetric=*/true);
    adjacency_ = sampled() ? mapped : mapped.to(device_);
  }
  return *adjacency_;
}

at::Tensor NodeInference::every_node(models::NodeModelImpl& model) {
  if (!sampled()) return model.forward(adjacency());
  return with_fitting_blocks([&](const models::InferenceBlocks& blocks) {
    return model.infer_by_row_blocks(adjacency(), blocks);
  });
}

at::Tensor NodeInference::rows(models::NodeModelImpl& model, const at::Tensor& ids) {
  if (!sampled()) return model.forward(adjacency()).index_select(0, ids.to(device_));
  return with_fitting_blocks([&](const models::InferenceBlocks& blocks) {
    return model.infer_rows(adjacency(), ids, blocks);
  });
}

// At most kInferenceRows rows and, for a model whose bytes grow with the entries (the GAT's), the
// entries a sampled step held (without backward or dropout a block costs less than the step that
// trained on as many).
models::InferenceBlocks NodeInference::first_blocks() const {
  models::InferenceBlocks blocks{.rows = kInferenceRows};
  if (models::node_model_kind(plan_.model.architecture).cost_grows_with_entries())
    blocks.entries =
        std::max<std::int64_t>(1, static_cast<std::int64_t>(plan_.sampled->expected_entries));
  return blocks;
}

// Runs `pass` over the current blocks; when it runs out of memory (the budget's allocator or the
// device's), halves them and runs it again, and keeps the smaller blocks for later passes. A pass
// holds nothing between tries.
template <typename Pass>
at::Tensor NodeInference::with_fitting_blocks(Pass pass) {
  if (!blocks_) blocks_ = first_blocks();
  for (;;) {
    try {
      return pass(*blocks_);
    } catch (const c10::OutOfMemoryError& error) {
      auto& blocks = *blocks_;
      if (blocks.rows == 1 && blocks.entries == 1) throw;
      blocks.rows = std::max<std::int64_t>(1, blocks.rows / 2);
      blocks.entries = std::max<std::int64_t>(1, blocks.entries / 2);
      run_.log(
          fmt::format("inference ran out of memory ({}): blocks halved to {} rows and {} entries",
                      error.what_without_backtrace(), blocks.rows, blocks.entries));
    }
  }
}

}  // namespace headroom::train
