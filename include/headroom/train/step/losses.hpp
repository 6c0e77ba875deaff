// The KD-GAT training objectives. Feature 0 of x is the CAN-ID index; the VGAE reconstructs
// features 1..10.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "headroom/loader/graph_batch.hpp"
#include "headroom/models/vgae.hpp"

namespace headroom::train {

// Weights of the VGAE objective (upstream's values as defaults).
struct VgaeLossWeights {
  double id = 0.1;
  double neighbour = 0.05;
  double kl = 0.01;
  // Upstream's KL: -0.5 * mean over every latent element. Off: the mirrored layout's KL, summed
  // over the latent dimensions and averaged over nodes (latent-size times stronger).
  bool kl_mean_over_elements = true;
};

// The objective of a VGAE of `config`: the default weights with its layout's KL reduction.
VgaeLossWeights vgae_loss_weights(const models::VgaeConfig& config);

struct VgaeLossTerms {
  at::Tensor total;           // reconstruction + id*CE + neighbour*BCE + kl*KL (scalar)
  at::Tensor reconstruction;  // MSE(reconstruction, x[:, 1:])
  at::Tensor id;              // CE(id_logits, x[:, 0])
  at::Tensor neighbour;       // BCE-with-logits(neighbour_logits, neighbourhood_targets)
  at::Tensor kl;              // -0.5 * mean of (1 + lv - mu^2 - e^lv) (or its sum over latent dims)
};

// CAN-ID class of every node: x[:, 0] as int64.
at::Tensor node_id_classes(const at::Tensor& x);

// Per node, the multi-hot set of its out-neighbours' ID classes: float [N, num_ids].
at::Tensor neighbourhood_targets(const at::Tensor& x, const at::Tensor& edge_index,
                                 std::int64_t num_ids);

VgaeLossTerms vgae_loss(const models::VgaeOutput& out, const loader::GraphBatch& batch,
                        std::int64_t num_ids, const VgaeLossWeights& weights = {});

// Per-graph difficulty for the curriculum: mean over the graph's nodes of the squared feature
// error (features 1..10) + 0.1 x the mean ID cross-entropy. float [num_graphs], no grad.
at::Tensor graph_reconstruction_score(const models::VgaeOutput& out,
                                      const loader::GraphBatch& batch, double id_weight = 0.1);

// VGAE student distillation: alpha*[0.5*MSE(projected_student_z, teacher_z) +
// 0.5*MSE(student_reconstruction, teacher_reconstruction)] + (1 - alpha)*task_loss.
at::Tensor vgae_distillation_loss(const at::Tensor& projected_student_z,
                                  const at::Tensor& teacher_z,
                                  const at::Tensor& student_reconstruction,
                                  const at::Tensor& teacher_reconstruction,
                                  const at::Tensor& task_loss, double alpha = 0.7);

// GAT student distillation: alpha*T^2*KL(softmax(teacher/T) || softmax(student/T)) (batch mean)
// + (1 - alpha)*CE(student, labels).
at::Tensor gat_distillation_loss(const at::Tensor& student_logits, const at::Tensor& teacher_logits,
                                 const at::Tensor& labels, double temperature = 4.0,
                                 double alpha = 0.7);

}  // namespace headroom::train
