// SGMP (Zhang et al., "Spatial Graph Message Passing"; issue 48): a geometric graph encoder that
// passes messages along 3rd-order paths i->j->k->p (nn/third_order_paths.hpp), each carrying the
// embeddings of its four nodes and three encodings of its geometry (nn/path_geometry.hpp): the
// distance i-j; the distance j-k with the angle i-j-k; the distance j-p with the angle i-j-p and
// the dihedral between the planes (i, j, k) and (i, j, p). Invariant to rotating or translating
// the positions and to renumbering the nodes.
//
//   h = Linear(F, H) -> ReLU -> Linear(H, H) of x
//   interactions x: h += sum over the paths from i of
//       combine([h_i, h_j, h_k, h_p, g1, g2, g3])          (7H -> 4H -> 2H -> H, ReLU between)
//     g1 = mlp1(rbf_d(d_ij)), g2 = mlp2([rbf_d(d_jk), rbf_a(theta_ijk)]),
//     g3 = mlp3([rbf_d(d_jp), rbf_a(theta_ijp), rbf_phi(phi)])      (each Linear -> ReLU -> Linear)
//   readout: the sum of h over each graph's nodes; head Linear(H, H/2) -> ReLU -> Linear(H/2, out)
//
// Memory: a batch's paths are the model's blow-up (a store's size index counts them per graph).
// The per-path work runs in chunks of at most max_paths_per_chunk paths, each enumerated, measured
// and smeared when it runs, so no per-path tensor of the whole batch ever exists; with
// checkpoint_chunks a chunk keeps nothing for backward but the layer's input (its activations are
// recomputed there, nn/checkpoint.hpp), so training holds one chunk's activations at a time.
// Without it, chunking bounds the forward's working memory but autograd keeps every chunk's.
//
// Modules are not thread-safe (as every torch::nn::Module); one instance per thread.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <array>
#include <cstdint>
#include <vector>

#include "headroom/nn/path_geometry.hpp"

namespace headroom::models {

struct SgmpOptions {
  std::int64_t in_features = 1;   // F: columns of x (a store's node_feature_count, identity too)
  std::int64_t hidden = 64;       // H: width of node embeddings and geometric encodings
  std::int64_t outputs = 1;       // per graph: 1 for a regression target, C for class logits
  std::int64_t interactions = 3;  // interaction layers
  double cutoff = 10.0;  // the distance smearing's last centre, in the positions' unit (QM9: Å)
  std::int64_t distance_centres = 50;  // Gaussians over [0, cutoff]
  std::int64_t angle_centres = 6;      // over [0, pi] radians
  std::int64_t dihedral_centres = 12;  // over [0, 2 pi] radians
  // Paths per chunk of the per-path work (>= 1); 0: a batch's paths in one chunk.
  std::int64_t max_paths_per_chunk = 0;
  bool checkpoint_chunks = false;  // recompute each chunk's activations in backward

  // Throws std::invalid_argument naming the first field out of range.
  void validate() const;
};

// What the encoder reads of a batch: loader::GraphBatch's fields of the same names (the models
// area does not see the loader: {b.x, b.pos, b.edge_index, b.batch, b.num_graphs}). Tensors on
// one device; the path enumeration reads edge_index on the host.
struct GeometricBatch {
  at::Tensor x;           // float32 [N, in_features]
  at::Tensor pos;         // float32 [N, D], D = 2 (taken as z = 0) or 3; gets no gradient
  at::Tensor edge_index;  // int64 [2, E], batch-global (source, target) rows
  at::Tensor batch;       // int64 [N]: each node's graph, 0 .. num_graphs - 1
  std::int64_t num_graphs = 0;
};

struct SgmpEncoding {
  at::Tensor nodes;   // float32 [N, H]: each node's embedding after the interactions
  at::Tensor graphs;  // float32 [num_graphs, H]: the sum over each graph's nodes
};

// The smearings of a model's options, which turn a chunk's geometry into each order's input:
// first [P, Kd], second [P, Kd + Ka], third [P, Kd + Ka + Kphi].
struct SgmpBases {
  nn::GaussianBasis distance;
  nn::GaussianBasis angle;
  nn::GaussianBasis dihedral;

  static SgmpBases of(const SgmpOptions& options);
  std::array<at::Tensor, 3> smear(const nn::PathGeometry& geometry) const;
};

// Linear(in, hidden) -> ReLU -> Linear(hidden, out).
class SgmpMlpImpl : public torch::nn::Module {
 public:
  SgmpMlpImpl(std::int64_t in, std::int64_t hidden, std::int64_t out);
  at::Tensor forward(const at::Tensor& input);
  const torch::nn::Linear& first() const { return first_; }
  const torch::nn::Linear& second() const { return second_; }

 private:
  torch::nn::Linear first_{nullptr};
  torch::nn::Linear second_{nullptr};
};
TORCH_MODULE(SgmpMlp);

// One interaction layer: the three geometric encodings and the combination of a path's seven
// parts into its message.
class SgmpInteractionImpl : public torch::nn::Module {
 public:
  SgmpInteractionImpl(std::int64_t hidden, const SgmpBases& bases);
  // h float [N, H]; paths int64 [4, P] (i, j, k, p) on h's device; smeared: SgmpBases::smear of
  // those paths' geometry -> the messages summed into each path's i: float [N, H].
  at::Tensor forward(const at::Tensor& h, const at::Tensor& paths,
                     const std::array<at::Tensor, 3>& smeared);
  // Order 1, 2, 3: g1, g2, g3's MLPs.
  const SgmpMlp& encoding(std::size_t order) const { return encodings_.at(order - 1); }
  // The combination's linear layers, 0 (7H -> 4H), 1 (4H -> 2H), 2 (2H -> H).
  const torch::nn::Linear& combine(std::size_t layer) const { return combine_.at(layer); }

 private:
  std::vector<SgmpMlp> encodings_;
  std::vector<torch::nn::Linear> combine_;
};
TORCH_MODULE(SgmpInteraction);

class SgmpImpl : public torch::nn::Module {
 public:
  // Throws std::invalid_argument for options out of range (SgmpOptions::validate). Weights are
  // Xavier-uniform and biases zero in every layer: SGMP's reference initialises its combination,
  // its head and the first layer of each geometric MLP so, and leaves the embedding and the
  // MLPs' second layers at PyTorch's default; one rule here.
  explicit SgmpImpl(const SgmpOptions& options);
  // Throws c10::Error for tensors of the wrong shape or dtype.
  SgmpEncoding encode(const GeometricBatch& batch);
  // [num_graphs, outputs]: the head of encode(batch).graphs.
  at::Tensor forward(const GeometricBatch& batch);

  const SgmpOptions& options() const { return options_; }
  const SgmpBases& bases() const { return bases_; }
  const SgmpMlp& embedding() const { return embedding_; }
  const SgmpInteraction& interaction(std::size_t layer) const { return interactions_.at(layer); }
  const SgmpMlp& head() const { return head_; }

 private:
  SgmpOptions options_;
  SgmpBases bases_;
  SgmpMlp embedding_{nullptr};
  std::vector<SgmpInteraction> interactions_;
  SgmpMlp head_{nullptr};
};
TORCH_MODULE(Sgmp);

}  // namespace headroom::models
