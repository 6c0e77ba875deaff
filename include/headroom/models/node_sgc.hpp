// Simple graph convolution (SGC; Wu et al., ICML 2019, "Simplifying Graph Convolutional
// Networks") for classifying the nodes of one graph whose nodes have no features: K propagations
// and one linear layer, no nonlinearity between them,
//   logits = Â^K · X · W,
// softmax'd by the loss. SGC precomputes Â^K · X once; here X is the identity, so that would be
// Â^K itself (N × N, dense after a few hops: 61,603² floats on 20 Newsgroups), and is never
// built. Instead every forward computes Â · (Â · (… · W)): K sparse-dense products over W's
// N × num_classes values, each as cheap as the GCN's output layer. No bias (as TextGCN's models),
// no dropout (as Wu et al.).
// Not thread-safe (a torch module).
#pragma once

#include <torch/nn/pimpl.h>

#include <cstdint>

#include "headroom/models/node_model.hpp"
#include "headroom/nn/sparse_adjacency.hpp"

namespace headroom::models {

class NodeSgcImpl : public NodeModelImpl {
 public:
  // config.architecture must be "sgc"; config.layers is K.
  explicit NodeSgcImpl(const NodeModelConfig& config);
  // Â^K · W, float32 [N, num_classes]; `adjacency` is N × N on the module's device.
  at::Tensor forward(const nn::SparseAdjacency& adjacency) override;
  // S^K · W[node_ids] for the subgraph S over `node_ids`: a sampled step's forward.
  at::Tensor forward_on(const nn::SparseAdjacency& subgraph, const at::Tensor& node_ids) override;
  // Each of the K products one block of `blocks.rows` rows at a time (its bytes do not grow with
  // the entries, which are not read): two N × num_classes tensors at once, never more.
  at::Tensor infer_by_row_blocks(const nn::SparseAdjacency& adjacency,
                                 const InferenceBlocks& blocks) override;
  // The rows `rows` of Â · (Â^(K-1) · W): the first K - 1 products over the whole graph (each
  // N × num_classes, as cheap as the last), the last over the listed rows alone.
  at::Tensor infer_rows(const nn::SparseAdjacency& adjacency, const at::Tensor& rows,
                        const InferenceBlocks& blocks) override;

  at::Tensor identity_weight;  // W [N, num_classes]: row i is node i's identity input times W

 private:
  // Â^steps · dense without autograd, each product `rows_per_block` rows at a time.
  static at::Tensor propagate_in_blocks(const nn::SparseAdjacency& adjacency, at::Tensor dense,
                                        std::int64_t steps, std::int64_t rows_per_block);
};
TORCH_MODULE(NodeSgc);

}  // namespace headroom::models
