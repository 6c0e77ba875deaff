// A graph attention network (Veličković et al., ICLR 2018) for classifying the nodes of one graph
// whose nodes have no features — the node task's second model beside TextGCN's GCN:
//   H = ELU(attend(X · W1) + b1)   (heads concatenated),   logits = attend'(dropout(H) · W2) + b2,
// attend the fused attention of nn/fused_gat.hpp over each node's neighbours and one self loop
// (PyG GATConv's semantics), LeakyReLU slope 0.2, dropout on the attention of both layers and on
// the hidden layer. As in the GCN, X is the identity: node i's input is W1's row i, and neither
// X nor a sparse identity is built. Attention replaces Â's weights (they are not read); the
// graph's structure is Â's entries. The kernel keeps entries × heads attention values, never one
// row per entry per channel.
// Not thread-safe (a torch module).
#pragma once

#include <torch/nn/pimpl.h>

#include <cstdint>

#include "headroom/models/node_model.hpp"
#include "headroom/nn/attention_graph.hpp"
#include "headroom/nn/gat_conv.hpp"
#include "headroom/nn/sparse_adjacency.hpp"

namespace headroom::models {

class NodeGatImpl : public NodeModelImpl {
 public:
  // config.architecture must be "gat": heads × hidden channels in the first layer.
  explicit NodeGatImpl(const NodeModelConfig& config);
  // The whole graph's attention graph is built on first use and kept while `adjacency` is the
  // same object with the same entries (an epoch's forward reuses it).
  at::Tensor forward(const nn::SparseAdjacency& adjacency) override;
  at::Tensor forward_on(const nn::SparseAdjacency& subgraph, const at::Tensor& node_ids) override;
  // Both layers run one block of target rows at a time (`blocks`: rows and entries) over those
  // rows' incoming entries: one block's attention graph and values at once, and the hidden
  // layer's N × heads × hidden output.
  at::Tensor infer_by_row_blocks(const nn::SparseAdjacency& adjacency,
                                 const InferenceBlocks& blocks) override;
  // Each block of `rows` computes its neighbourhood's hidden rows, then its logits.
  at::Tensor infer_rows(const nn::SparseAdjacency& adjacency, const at::Tensor& rows,
                        const InferenceBlocks& blocks) override;

  at::Tensor identity_weight;   // W1 [N, heads × hidden]: node i's first-layer projection
  at::Tensor att_src;           // [1, heads, hidden]
  at::Tensor att_dst;           // [1, heads, hidden]
  at::Tensor hidden_bias;       // [heads × hidden]
  nn::GATConv output{nullptr};  // one head, heads × hidden -> num_classes

 private:
  // ELU(attention over `graph` of the projected inputs `projected` [n, heads × hidden] + b1).
  at::Tensor hidden_layer(const at::Tensor& projected, const nn::AttentionGraph& graph);
  at::Tensor both_layers(const at::Tensor& projected, const nn::AttentionGraph& graph);
  // Rows `rows` (int64 on the host) of the hidden layer, a block at a time.
  at::Tensor hidden_rows(const nn::SparseAdjacency& adjacency, const at::Tensor& rows,
                         const InferenceBlocks& blocks);
  // Rows `rows` (int64 on the host) of the logits, a block at a time, from `hidden` (every node's
  // hidden rows) or, undefined, from each block's neighbourhood's hidden rows computed for it.
  at::Tensor output_rows(const nn::SparseAdjacency& adjacency, const at::Tensor& rows,
                         const at::Tensor& hidden, const InferenceBlocks& blocks);

  struct GraphMemo {
    const nn::SparseAdjacency* adjacency = nullptr;
    std::int64_t entries = 0;
    nn::AttentionGraph graph;
  };
  GraphMemo memo_;
};
TORCH_MODULE(NodeGat);

// The attention graph of a CSR adjacency on its device: entry (i, j) is the edge j -> i.
nn::AttentionGraph attention_graph_of(const nn::SparseAdjacency& adjacency);

// The subgraph a list of target rows reads, renumbered: `nodes` (int64, host) holds the K rows
// first, in their order, then every other node their entries name, in first-seen order; `graph`
// (on `device`) has the rows' entries alone (edges into local nodes 0..K-1).
struct RowNeighbourhood {
  at::Tensor nodes;
  nn::AttentionGraph graph;
  std::int64_t rows = 0;  // K
};
// `rows` int64 [K] on the host, distinct, in [0, N). The adjacency's arrays are read on the host.
RowNeighbourhood row_neighbourhood(const nn::SparseAdjacency& adjacency, const at::Tensor& rows,
                                   const c10::Device& device);

}  // namespace headroom::models
