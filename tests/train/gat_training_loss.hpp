// The classifier stages' loss on a GAT, for tests that drive train::TrainingStep directly:
// cross-entropy of the model's logits against the batch's labels.
#pragma once

#include <torch/torch.h>

#include "headroom/loader/graph_batch.hpp"
#include "headroom/models/gat_with_jk.hpp"
#include "headroom/train/step/training_step.hpp"

namespace headroom::testing {

// Holds `model` (a shared module handle) for as long as the loss lives.
inline train::BatchLoss gat_cross_entropy(models::GATWithJK model) {
  return [model](const loader::GraphBatch& batch) mutable {
    return torch::cross_entropy_loss(
        model->forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs), batch.y);
  };
}

}  // namespace headroom::testing
