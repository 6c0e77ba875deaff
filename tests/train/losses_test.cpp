// The training objectives against references written out element by element.
#include "headroom/train/step/losses.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

namespace headroom::train {
namespace {

constexpr std::int64_t kNumIds = 4;
constexpr std::int64_t kLatent = 3;

double at2(const at::Tensor& t, std::int64_t i, std::int64_t j) {
  return t.index({i, j}).item<double>();
}

// log(sum_k exp(logits[i, k])) - logits[i, target], with plain arithmetic.
double cross_entropy_row(const at::Tensor& logits, std::int64_t i, std::int64_t target) {
  double sum = 0.0;
  for (std::int64_t k = 0; k < logits.size(1); ++k) sum += std::exp(at2(logits, i, k));
  return std::log(sum) - at2(logits, i, target);
}

// A hand-made 5-node batch of two graphs (nodes 0-1 and 2-4), ID classes in [0, kNumIds).
loader::GraphBatch tiny_batch() {
  torch::manual_seed(3);
  loader::GraphBatch b;
  b.x = torch::rand({5, 11});
  b.x.index_put_({torch::indexing::Slice(), 0}, torch::tensor({2.F, 0.F, 3.F, 1.F, 3.F}));
  b.edge_index = torch::tensor({{0, 1, 2, 3, 4, 2}, {1, 0, 3, 4, 2, 4}}, torch::kLong);
  b.batch = torch::tensor({0, 0, 1, 1, 1}, torch::kLong);
  b.y = torch::tensor({0, 1}, torch::kLong);
  b.graph_ids = torch::tensor({10, 11}, torch::kLong);
  b.num_graphs = 2;
  b.num_nodes = 5;
  b.num_edges = 6;
  return b;
}

models::VgaeOutput random_output(std::int64_t nodes) {
  torch::manual_seed(4);
  models::VgaeOutput out;
  out.reconstruction = torch::rand({nodes, 10});
  out.id_logits = torch::randn({nodes, kNumIds});
  out.neighbour_logits = torch::randn({nodes, kNumIds});
  out.mu = torch::randn({nodes, kLatent});
  out.logvar = torch::randn({nodes, kLatent});
  out.z = out.mu.clone();
  return out;
}

TEST(Losses, NodeIdClasses) {
  const auto x = torch::tensor({{3.F, 0.5F}, {0.F, 0.1F}, {7.F, 0.9F}});
  const auto classes = node_id_classes(x);
  EXPECT_EQ(classes.scalar_type(), torch::kLong);
  EXPECT_TRUE(torch::equal(classes, torch::tensor({3, 0, 7}, torch::kLong)));
}

TEST(Losses, NeighbourhoodTargetsOfAHandMadeGraph) {
  // Node classes 2, 0, 2. Edges 0->1, 1->2, 0->2, and 0->1 again; node 2 has no out-edge.
  const auto x = torch::tensor({{2.F, 0.F}, {0.F, 0.F}, {2.F, 0.F}});
  const auto edges = torch::tensor({{0, 1, 0, 0}, {1, 2, 2, 1}}, torch::kLong);
  const auto targets = neighbourhood_targets(x, edges, kNumIds);
  const auto expected = torch::tensor({{1.F, 0.F, 1.F, 0.F},    // neighbours 1 (class 0), 2 (2)
                                       {0.F, 0.F, 1.F, 0.F},    // neighbour 2 (class 2)
                                       {0.F, 0.F, 0.F, 0.F}});  // none
  EXPECT_EQ(targets.scalar_type(), torch::kFloat);
  EXPECT_TRUE(torch::equal(targets, expected)) << targets;

  const auto no_edges = neighbourhood_targets(x, torch::zeros({2, 0}, torch::kLong), kNumIds);
  EXPECT_TRUE(torch::equal(no_edges, torch::zeros({3, kNumIds})));
}

struct ReferenceTerms {
  double reconstruction = 0, id = 0, neighbour = 0, kl = 0, kl_summed = 0;
};

ReferenceTerms reference_terms(const models::VgaeOutput& out, const loader::GraphBatch& b) {
  const auto recon = out.reconstruction.to(torch::kFloat);
  const auto id_logits = out.id_logits.to(torch::kFloat);
  const auto nb_logits = out.neighbour_logits.to(torch::kFloat);
  const auto mu = out.mu.to(torch::kFloat);
  const auto logvar = out.logvar.to(torch::kFloat);
  const std::int64_t n = b.x.size(0);
  ReferenceTerms r;
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t f = 0; f < 10; ++f) {
      const double d = at2(recon, i, f) - at2(b.x, i, f + 1);
      r.reconstruction += d * d / static_cast<double>(n * 10);
    }
    r.id += cross_entropy_row(id_logits, i, static_cast<std::int64_t>(at2(b.x, i, 0))) /
            static_cast<double>(n);
    // Multi-hot targets from an explicit edge loop.
    std::vector<double> target(kNumIds, 0.0);
    for (std::int64_t e = 0; e < b.edge_index.size(1); ++e) {
      if (b.edge_index.index({0, e}).item<std::int64_t>() != i) continue;
      const auto dst = b.edge_index.index({1, e}).item<std::int64_t>();
      target[static_cast<std::size_t>(at2(b.x, dst, 0))] = 1.0;
    }
    for (std::int64_t k = 0; k < kNumIds; ++k) {
      const double p = 1.0 / (1.0 + std::exp(-at2(nb_logits, i, k)));
      const double t = target[static_cast<std::size_t>(k)];
      r.neighbour -=
          (t * std::log(p) + (1.0 - t) * std::log(1.0 - p)) / static_cast<double>(n * kNumIds);
    }
    double kl_node = 0.0;
    for (std::int64_t l = 0; l < mu.size(1); ++l) {
      const double m = at2(mu, i, l);
      const double lv = at2(logvar, i, l);
      kl_node += 1.0 + lv - m * m - std::exp(lv);
    }
    // Upstream: -0.5 * mean over every latent element; mirrored: summed over the latent.
    r.kl += -0.5 * kl_node / static_cast<double>(n * mu.size(1));
    r.kl_summed += -0.5 * kl_node / static_cast<double>(n);
  }
  return r;
}

TEST(Losses, VgaeLossTermsMatchElementwiseReference) {
  const auto batch = tiny_batch();
  const auto out = random_output(5);
  const ReferenceTerms r = reference_terms(out, batch);
  const VgaeLossWeights weights{0.3, 0.2, 0.05, true};
  const VgaeLossTerms terms = vgae_loss(out, batch, kNumIds, weights);
  EXPECT_NEAR(terms.reconstruction.item<double>(), r.reconstruction, 1e-5);
  EXPECT_NEAR(terms.id.item<double>(), r.id, 1e-5);
  EXPECT_NEAR(terms.neighbour.item<double>(), r.neighbour, 1e-5);
  EXPECT_NEAR(terms.kl.item<double>(), r.kl, 1e-5);
  EXPECT_NEAR(terms.total.item<double>(),
              r.reconstruction + 0.3 * r.id + 0.2 * r.neighbour + 0.05 * r.kl, 1e-5);
  EXPECT_EQ(terms.total.dim(), 0);

  // The default weights and KL are upstream's.
  const VgaeLossTerms defaults = vgae_loss(out, batch, kNumIds);
  EXPECT_NEAR(defaults.total.item<double>(),
              r.reconstruction + 0.1 * r.id + 0.05 * r.neighbour + 0.01 * r.kl, 1e-5);

  // The mirrored layout's KL sums over the latent dimensions.
  models::VgaeConfig mirrored;
  mirrored.num_ids = kNumIds;
  mirrored.layout = models::VgaeLayout::kMirrored;
  EXPECT_FALSE(vgae_loss_weights(mirrored).kl_mean_over_elements);
  mirrored.layout = models::VgaeLayout::kKdGat;
  EXPECT_TRUE(vgae_loss_weights(mirrored).kl_mean_over_elements);
  const VgaeLossTerms summed = vgae_loss(out, batch, kNumIds, {0.1, 0.05, 0.01, false});
  EXPECT_NEAR(summed.kl.item<double>(), r.kl_summed, 1e-5);
  EXPECT_NEAR(summed.kl.item<double>(), r.kl * static_cast<double>(out.mu.size(1)), 1e-4);
}

TEST(Losses, VgaeLossOfHalfPrecisionOutputsIsFloat32) {
  const auto batch = tiny_batch();
  models::VgaeOutput out = random_output(5);
  for (auto* t :
       {&out.reconstruction, &out.id_logits, &out.neighbour_logits, &out.mu, &out.logvar}) {
    *t = t->to(torch::kBFloat16).requires_grad_(true);
  }
  const ReferenceTerms r = reference_terms(out, batch);  // of the bf16 values, in double
  const VgaeLossTerms terms = vgae_loss(out, batch, kNumIds);
  EXPECT_EQ(terms.total.scalar_type(), torch::kFloat);
  EXPECT_NEAR(terms.reconstruction.item<double>(), r.reconstruction, 1e-5);
  EXPECT_NEAR(terms.id.item<double>(), r.id, 1e-5);
  EXPECT_NEAR(terms.neighbour.item<double>(), r.neighbour, 1e-5);
  EXPECT_NEAR(terms.kl.item<double>(), r.kl, 1e-5);
  terms.total.backward();
  EXPECT_TRUE(out.reconstruction.grad().defined());
  EXPECT_EQ(out.reconstruction.grad().scalar_type(), torch::kBFloat16);
}

TEST(Losses, GraphReconstructionScorePerGraph) {
  const auto batch = tiny_batch();
  models::VgaeOutput out = random_output(5);
  out.reconstruction.requires_grad_(true);
  const double id_weight = 0.25;
  const auto score = graph_reconstruction_score(out, batch, id_weight);
  EXPECT_EQ(score.scalar_type(), torch::kFloat);
  EXPECT_FALSE(score.requires_grad());
  ASSERT_EQ(score.sizes(), (std::vector<std::int64_t>{2}));
  const std::vector<std::vector<std::int64_t>> graphs = {{0, 1}, {2, 3, 4}};
  for (std::size_t g = 0; g < graphs.size(); ++g) {
    double error = 0.0;
    double ce = 0.0;
    for (const auto i : graphs[g]) {
      double node = 0.0;
      for (std::int64_t f = 0; f < 10; ++f) {
        const double d = at2(out.reconstruction, i, f) - at2(batch.x, i, f + 1);
        node += d * d / 10.0;
      }
      error += node;
      ce += cross_entropy_row(out.id_logits, i, static_cast<std::int64_t>(at2(batch.x, i, 0)));
    }
    const auto n = static_cast<double>(graphs[g].size());
    EXPECT_NEAR(score[static_cast<std::int64_t>(g)].item<double>(), error / n + id_weight * ce / n,
                1e-5)
        << "graph " << g;
  }
}

double mse(const at::Tensor& a, const at::Tensor& b) {
  const auto fa = a.flatten();
  const auto fb = b.flatten();
  double sum = 0.0;
  for (std::int64_t i = 0; i < fa.size(0); ++i) {
    const double d = fa[i].item<double>() - fb[i].item<double>();
    sum += d * d;
  }
  return sum / static_cast<double>(fa.size(0));
}

TEST(Losses, VgaeDistillationMixesLatentReconstructionAndTask) {
  torch::manual_seed(5);
  const auto student_z = torch::randn({6, 4}).requires_grad_(true);
  const auto teacher_z = torch::randn({6, 4}).requires_grad_(true);
  const auto student_rec = torch::rand({6, 10});
  const auto teacher_rec = torch::rand({6, 10});
  const auto task = torch::tensor(0.8F);
  const double distill = 0.5 * mse(student_z, teacher_z) + 0.5 * mse(student_rec, teacher_rec);
  for (const double alpha : {0.0, 0.7, 1.0}) {
    const auto loss =
        vgae_distillation_loss(student_z, teacher_z, student_rec, teacher_rec, task, alpha);
    EXPECT_NEAR(loss.item<double>(), alpha * distill + (1.0 - alpha) * 0.8, 1e-5) << alpha;
  }
  const auto loss = vgae_distillation_loss(student_z, teacher_z, student_rec, teacher_rec, task);
  EXPECT_NEAR(loss.item<double>(), 0.7 * distill + 0.3 * 0.8, 1e-5);
  loss.backward();
  EXPECT_TRUE(student_z.grad().defined());
  EXPECT_FALSE(teacher_z.grad().defined()) << "the teacher must get no gradient";
}

// KL(softmax(t/T) || softmax(s/T)) per row, averaged over rows, with plain arithmetic.
double reference_kl(const at::Tensor& student, const at::Tensor& teacher, double temperature) {
  double total = 0.0;
  for (std::int64_t i = 0; i < student.size(0); ++i) {
    double zs = 0.0;
    double zt = 0.0;
    for (std::int64_t k = 0; k < student.size(1); ++k) {
      zs += std::exp(at2(student, i, k) / temperature);
      zt += std::exp(at2(teacher, i, k) / temperature);
    }
    for (std::int64_t k = 0; k < student.size(1); ++k) {
      const double ps = std::exp(at2(student, i, k) / temperature) / zs;
      const double pt = std::exp(at2(teacher, i, k) / temperature) / zt;
      total += pt * std::log(pt / ps);
    }
  }
  return total / static_cast<double>(student.size(0));
}

TEST(Losses, GatDistillationIsScaledKlPlusCrossEntropy) {
  torch::manual_seed(6);
  const auto student = (torch::randn({5, 2}) * 3.0).requires_grad_(true);
  const auto teacher = (torch::randn({5, 2}) * 3.0).requires_grad_(true);
  const auto labels = torch::tensor({0, 1, 1, 0, 1}, torch::kLong);
  double ce = 0.0;
  for (std::int64_t i = 0; i < 5; ++i) {
    ce += cross_entropy_row(student, i, labels[i].item<std::int64_t>()) / 5.0;
  }
  for (const double temperature : {1.0, 4.0}) {
    const double kl = reference_kl(student, teacher, temperature);
    ASSERT_GT(kl, 1e-3);  // the scaling below must be visible
    for (const double alpha : {0.0, 0.7, 1.0}) {
      const auto loss = gat_distillation_loss(student, teacher, labels, temperature, alpha);
      EXPECT_NEAR(loss.item<double>(), alpha * temperature * temperature * kl + (1.0 - alpha) * ce,
                  1e-5)
          << "T " << temperature << " alpha " << alpha;
    }
  }
  const auto loss = gat_distillation_loss(student, teacher, labels);
  EXPECT_NEAR(loss.item<double>(), 0.7 * 16.0 * reference_kl(student, teacher, 4.0) + 0.3 * ce,
              1e-5);
  loss.backward();
  EXPECT_TRUE(student.grad().defined());
  EXPECT_FALSE(teacher.grad().defined());
}

TEST(Losses, GatDistillationOfIdenticalLogitsIsOnlyTheTaskLoss) {
  const auto logits = torch::tensor({{2.F, -1.F}, {0.5F, 0.25F}});
  const auto labels = torch::tensor({0, 1}, torch::kLong);
  const double ce = (cross_entropy_row(logits, 0, 0) + cross_entropy_row(logits, 1, 1)) / 2.0;
  EXPECT_NEAR(gat_distillation_loss(logits, logits, labels, 4.0, 0.7).item<double>(), 0.3 * ce,
              1e-6);
}

}  // namespace
}  // namespace headroom::train
