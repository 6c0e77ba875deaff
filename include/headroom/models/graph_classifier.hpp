// The interface every graph classifier module implements: a batch of graphs in, per-graph class
// logits out. The classifier stages train any of them, distillation reads their logits, and
// evaluation scores P(attack) = softmax(logits)[:, 1]. GATWithJK and GcnClassifier are two.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <memory>

namespace headroom::models {

class GraphClassifierImpl : public torch::nn::Module {
 public:
  // x float [N, in_features] (column 0: ID index), edge_index int64 [2, E], batch int64 [N]
  // -> logits [num_graphs, num_classes].
  virtual at::Tensor forward(const at::Tensor& x, const at::Tensor& edge_index,
                             const at::Tensor& batch, std::int64_t num_graphs) = 0;
  // Recompute layers in the backward pass (less memory, one more forward), for models that can;
  // the others ignore it. Changes no result, only the step's memory and time.
  virtual void set_gradient_checkpointing(bool /*on*/) {}
};

// Shared ownership, as LibTorch's module holders have.
using GraphClassifier = std::shared_ptr<GraphClassifierImpl>;

}  // namespace headroom::models
