// TextGCN's model (Yao, Mao, Luo, AAAI 2019; Kipf & Welling's GCN) for classifying the nodes of one
// graph whose nodes have no features:
//   H = ReLU(Â · X · W1),   logits = Â · dropout(H) · W2,
// Â the normalised adjacency (nn/sparse_adjacency.hpp). X is the identity, so X · W1 is W1: node
// i's input is W1's row i, and neither X (N × N) nor a sparse identity is ever built. As in
// TextGCN's featureless first layer, the input takes no dropout (its dropout would drop identity
// entries that the layer never reads); the hidden layer does. No biases, as TextGCN.
// Not thread-safe (a torch module).
#pragma once

#include <torch/nn/pimpl.h>

#include <cstdint>

#include "headroom/models/node_model.hpp"
#include "headroom/nn/sparse_adjacency.hpp"

namespace headroom::models {

class NodeGcnImpl : public NodeModelImpl {
 public:
  // config.architecture must be "gcn".
  explicit NodeGcnImpl(const NodeModelConfig& config);
  // Logits of every node, float32 [N, num_classes]; `adjacency` is N × N on the module's device.
  at::Tensor forward(const nn::SparseAdjacency& adjacency) override;
  // Logits of a subgraph's nodes, float32 [n, num_classes]: `subgraph` is n × n over the nodes
  // `node_ids` (int64 [n], ids of the whole graph: their identity inputs are those W1 rows), on
  // the module's device. A sampled step's forward (train/step/node_subgraph_batch.hpp).
  at::Tensor forward_on(const nn::SparseAdjacency& subgraph, const at::Tensor& node_ids) override;
  // forward(adjacency) without autograd and in evaluation mode (no dropout), `blocks.rows`
  // hidden rows at a time (`blocks.entries` does not bound its bytes and is not read): Â · relu(Â ·
  // W1) · W2 as Â · Z with Z = relu(Â · W1) · W2 built block by block, so that the N × hidden
  // activations never exist at once. `adjacency` may stay on the host while the module is on a
  // device (each block's rows travel). Throws std::logic_error under autograd.
  at::Tensor infer_by_row_blocks(const nn::SparseAdjacency& adjacency,
                                 const InferenceBlocks& blocks) override;
  // The logits of the nodes `rows` alone (int64 [K] on the host), as infer_by_row_blocks gives
  // them: the hidden layer is computed only for the rows' neighbours (the nodes their logits
  // read), `blocks.rows` at a time. Validation reads a few thousand documents; their
  // neighbourhood is a part of the graph's entries, not all of them.
  at::Tensor infer_rows(const nn::SparseAdjacency& adjacency, const at::Tensor& rows,
                        const InferenceBlocks& blocks) override;

  at::Tensor identity_weight;  // W1 [N, hidden]: row i is node i's first-layer input times W1
  at::Tensor output_weight;    // W2 [hidden, num_classes]

 private:
  // Â · W1 depends on W1 alone (no dropout, no mode): the evaluation pass after an optimiser step
  // computes exactly what the next training forward needs, so it is kept until then (one N × hidden
  // product per epoch fewer). Valid while W1 is the same tensor at the same version and the
  // adjacency is the same object.
  struct FirstLayerMemo {
    const void* weight = nullptr;
    std::int64_t version = 0;
    const nn::SparseAdjacency* adjacency = nullptr;
    at::Tensor product;
  };
  at::Tensor first_layer(const nn::SparseAdjacency& adjacency);

  FirstLayerMemo memo_;
};
TORCH_MODULE(NodeGcn);

}  // namespace headroom::models
