#include "headroom/train/step/losses.hpp"

#include <torch/torch.h>

#include "headroom/models/vgae_layout.hpp"

namespace headroom::train {
namespace {

// Losses are computed in float32 whatever the model's autocast dtype: bf16 sums over thousands of
// nodes lose the small differences the objective is made of.
at::Tensor as_float(const at::Tensor& t) { return t.to(at::kFloat); }

at::Tensor features_to_reconstruct(const at::Tensor& x) { return as_float(x.slice(1, 1)); }

}  // namespace

at::Tensor node_id_classes(const at::Tensor& x) {
  TORCH_CHECK(x.dim() == 2 && x.size(1) >= 1, "node_id_classes: x must be [N, F], got ", x.sizes());
  return x.select(1, 0).to(at::kLong);
}

at::Tensor neighbourhood_targets(const at::Tensor& x, const at::Tensor& edge_index,
                                 std::int64_t num_ids) {
  TORCH_CHECK(edge_index.dim() == 2 && edge_index.size(0) == 2,
              "neighbourhood_targets: edge_index must be [2, E], got ", edge_index.sizes());
  TORCH_CHECK(num_ids >= 1, "neighbourhood_targets: num_ids must be >= 1");
  const at::Tensor classes = node_id_classes(x);
  const std::int64_t num_nodes = x.size(0);
  at::Tensor targets = at::zeros({num_nodes, num_ids}, x.options().dtype(at::kFloat));
  const at::Tensor source = edge_index.select(0, 0).to(at::kLong);
  const at::Tensor target_class = classes.index_select(0, edge_index.select(0, 1).to(at::kLong));
  // Row-major flat positions (source, class of target); repeated edges set the same cell again.
  targets.view({-1}).index_fill_(0, source * num_ids + target_class, 1.0);
  return targets;
}

VgaeLossWeights vgae_loss_weights(const models::VgaeConfig& config) {
  VgaeLossWeights weights;
  weights.kl_mean_over_elements = models::vgae_layer_plan(config).kl_mean_over_elements;
  return weights;
}

VgaeLossTerms vgae_loss(const models::VgaeOutput& out, const loader::GraphBatch& batch,
                        std::int64_t num_ids, const VgaeLossWeights& weights) {
  VgaeLossTerms terms;
  terms.reconstruction =
      at::mse_loss(as_float(out.reconstruction), features_to_reconstruct(batch.x));
  terms.id = at::cross_entropy_loss(as_float(out.id_logits), node_id_classes(batch.x));
  terms.neighbour = at::binary_cross_entropy_with_logits(
      as_float(out.neighbour_logits), neighbourhood_targets(batch.x, batch.edge_index, num_ids));
  const at::Tensor mu = as_float(out.mu);
  const at::Tensor logvar = as_float(out.logvar);
  const at::Tensor kl_elements = 1.0 + logvar - mu.pow(2) - logvar.exp();
  terms.kl =
      -0.5 * (weights.kl_mean_over_elements ? kl_elements.mean() : kl_elements.sum(1).mean());
  terms.total = terms.reconstruction + weights.id * terms.id + weights.neighbour * terms.neighbour +
                weights.kl * terms.kl;
  return terms;
}

at::Tensor graph_reconstruction_score(const models::VgaeOutput& out,
                                      const loader::GraphBatch& batch, double id_weight) {
  torch::NoGradGuard no_grad;
  const at::Tensor node_error =
      (as_float(out.reconstruction) - features_to_reconstruct(batch.x)).pow(2).mean(1);
  const at::Tensor node_ce = at::cross_entropy_loss(
      as_float(out.id_logits), node_id_classes(batch.x), {}, at::Reduction::None);
  const at::Tensor membership = batch.batch.to(at::kLong);
  const auto per_graph_mean = [&](const at::Tensor& per_node) {
    const at::Tensor sums =
        at::zeros({batch.num_graphs}, per_node.options()).index_add_(0, membership, per_node);
    const at::Tensor counts = at::zeros({batch.num_graphs}, per_node.options())
                                  .index_add_(0, membership, at::ones_like(per_node));
    return sums / counts.clamp_min(1.0);  // a graph without nodes scores 0
  };
  return per_graph_mean(node_error) + id_weight * per_graph_mean(node_ce);
}

at::Tensor vgae_distillation_loss(const at::Tensor& projected_student_z,
                                  const at::Tensor& teacher_z,
                                  const at::Tensor& student_reconstruction,
                                  const at::Tensor& teacher_reconstruction,
                                  const at::Tensor& task_loss, double alpha) {
  // The teacher is a fixed target: no gradient may reach it through the distillation terms.
  const at::Tensor latent =
      at::mse_loss(as_float(projected_student_z), as_float(teacher_z.detach()));
  const at::Tensor reconstruction =
      at::mse_loss(as_float(student_reconstruction), as_float(teacher_reconstruction.detach()));
  return alpha * (0.5 * latent + 0.5 * reconstruction) + (1.0 - alpha) * as_float(task_loss);
}

at::Tensor gat_distillation_loss(const at::Tensor& student_logits, const at::Tensor& teacher_logits,
                                 const at::Tensor& labels, double temperature, double alpha) {
  TORCH_CHECK(temperature > 0.0, "gat_distillation_loss: temperature must be > 0");
  TORCH_CHECK(student_logits.dim() == 2 && student_logits.sizes() == teacher_logits.sizes(),
              "gat_distillation_loss: logits must be [B, C] and alike, got ",
              student_logits.sizes(), " and ", teacher_logits.sizes());
  const at::Tensor student = as_float(student_logits);
  const at::Tensor log_student = at::log_softmax(student / temperature, 1);
  const at::Tensor log_teacher =
      at::log_softmax(as_float(teacher_logits.detach()) / temperature, 1);
  // KL(teacher || student) summed over classes, averaged over the batch ("batchmean"); T^2 keeps
  // its gradient on the scale of the hard-label loss.
  const at::Tensor kl = (log_teacher.exp() * (log_teacher - log_student)).sum() /
                        static_cast<double>(student.size(0));
  const at::Tensor hard = at::cross_entropy_loss(student, labels.to(at::kLong));
  return alpha * temperature * temperature * kl + (1.0 - alpha) * hard;
}

}  // namespace headroom::train
