// The interface every node-classification model on one big graph implements (TextGCN's GCN,
// models/node_gcn.hpp; a GAT, models/node_gat.hpp; SGC, models/node_sgc.hpp): node i has no
// features, so its input is the identity row and the first layer's input projection is that
// layer's weight row i — an N × N input is never built. Stage `node`, its memory probes and its
// checkpoints take any of them through this interface; make_node_model builds the one a
// configuration names, through the node model registry (models/node_model_kind.hpp).
// Not thread-safe (torch modules).
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "headroom/nn/sparse_adjacency.hpp"

namespace headroom::models {

struct NodeModelConfig {
  std::int64_t num_nodes = 0;    // N: the identity input's width, the first weight's rows
  std::int64_t hidden = 200;     // GCN: hidden width (TextGCN's 200); GAT: channels per head
  std::int64_t num_classes = 0;  // logits per node
  double dropout = 0.5;          // on the hidden layer (GAT: and on the attention), in training
  // A registered node model's name (node_model_kind.hpp): "gcn", "gat", "sgc". What checkpoints
  // store and --node-model / plan's --preset name.
  std::string architecture = "gcn";
  std::int64_t heads = 1;   // GAT's first layer's attention heads (its output layer has one)
  std::int64_t layers = 2;  // GCN and GAT: 2 (fixed); SGC: K, the propagation steps of Â^K

  // Throws std::invalid_argument for a non-positive size, a dropout outside [0, 1), an unknown
  // architecture, or what that architecture refuses (a GCN with more than one head, ...).
  void validate() const;
  // The first layer's output width: hidden (GCN), heads × hidden (GAT).
  std::int64_t hidden_width() const { return hidden * heads; }
  // Float32 parameters, as the architecture counts them.
  std::int64_t parameter_count() const;
};

// "architecture" and "heads" are absent from checkpoints written before the GAT existed, and
// "layers" from those written before SGC: they read as a one-head, two-layer GCN. Reading an
// unknown architecture throws std::invalid_argument listing the known ones.
void to_json(nlohmann::json& json, const NodeModelConfig& config);
void from_json(const nlohmann::json& json, NodeModelConfig& config);

// How much of the graph one block of an inference pass takes: at most `rows` target rows, and at
// most `entries` of those rows' adjacency entries (a row with more is a block of its own). The
// GCN's block costs rows × width (its products read Â in place) and it ignores `entries`; the
// GAT's grows with the entries too (its attention graph and attention values), so a stage whose
// step was sized to a budget caps them at what its step held.
struct InferenceBlocks {
  std::int64_t rows = 4096;
  std::int64_t entries = std::numeric_limits<std::int64_t>::max();
};

// Where the block that starts at position `first` of `count` target rows ends (exclusive): row k
// is `ids[k]` (`ids` null: row k is node k), its entries offsets[row + 1] - offsets[row].
std::int64_t inference_block_end(const std::int64_t* offsets, const std::int64_t* ids,
                                 std::int64_t first, std::int64_t count,
                                 const InferenceBlocks& blocks);

class NodeModelImpl : public torch::nn::Module {
 public:
  // Logits of every node, float32 [N, num_classes]; `adjacency` is N × N on the module's device.
  virtual at::Tensor forward(const nn::SparseAdjacency& adjacency) = 0;
  // Logits of a subgraph's nodes, float32 [n, num_classes]: `subgraph` is n × n over the nodes
  // `node_ids` (int64 [n], ids of the whole graph: their identity inputs are those weight rows),
  // on the module's device. A sampled step's forward (train/step/node_subgraph_batch.hpp).
  virtual at::Tensor forward_on(const nn::SparseAdjacency& subgraph,
                                const at::Tensor& node_ids) = 0;
  // forward(adjacency) without autograd and in evaluation mode, its hidden layer computed one
  // block of rows at a time so that the whole graph's activations of one layer never exist at
  // once. `adjacency` may stay on the host while the module is on a device. Throws
  // std::logic_error under autograd, std::invalid_argument for a block limit below 1.
  virtual at::Tensor infer_by_row_blocks(const nn::SparseAdjacency& adjacency,
                                         const InferenceBlocks& blocks) = 0;
  // The logits of the nodes `rows` alone (int64 [K] on the host, in their order), as
  // infer_by_row_blocks gives them: the hidden layer is computed only for the nodes their logits
  // read. Validation reads a few thousand documents, not the whole graph.
  virtual at::Tensor infer_rows(const nn::SparseAdjacency& adjacency, const at::Tensor& rows,
                                const InferenceBlocks& blocks) = 0;

  const NodeModelConfig& config() const { return config_; }

 protected:
  explicit NodeModelImpl(const NodeModelConfig& config);
  // Throws std::logic_error naming `what` under autograd, std::invalid_argument for a block
  // limit below 1.
  void require_inference(const char* what, const InferenceBlocks& blocks) const;

  NodeModelConfig config_;
};

// Shared ownership, as LibTorch's module holders have.
using NodeModel = std::shared_ptr<NodeModelImpl>;

// The model `config.architecture` names (node_model_kind(...).build), its weights drawn from
// torch's default generator. Throws std::invalid_argument for an invalid configuration.
NodeModel make_node_model(const NodeModelConfig& config);

}  // namespace headroom::models
