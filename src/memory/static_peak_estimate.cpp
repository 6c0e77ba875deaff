#include "headroom/memory/static_peak_estimate.hpp"

#include <algorithm>
#include <cstdint>

#include "headroom/models/vgae_layout.hpp"

namespace headroom::memory {
namespace {

constexpr double kFloat = 4.0;
constexpr double kIndex = 8.0;

// Bytes a term costs per node and per edge.
struct Cost {
  double node = 0;
  double edge = 0;
  Cost operator+(const Cost& other) const { return {node + other.node, edge + other.edge}; }
  Cost& operator+=(const Cost& other) {
    node += other.node;
    edge += other.edge;
    return *this;
  }
};

// One GATConv (+ activation, dropout, optional batch norm) with H heads of C channels on inputs
// of `in` features, run by the fused kernel (nn/fused_gat.hpp): what its forward keeps for the
// backward pass. `act`: bytes of an activation.
Cost gat_block_saved(double in, double heads, double channels, double act, bool batch_norm) {
  const double hc = heads * channels;
  Cost cost;
  // Node side: the input (kept by the projection), the projection, the two attention halves, the
  // aggregated output and its bias sum, then norm and the fused ReLU-dropout's output (no mask:
  // nn/relu_dropout.hpp), and the self loop's attention value (float32).
  cost.node =
      act * (in + 2 * hc + 2 * heads + hc) + act * hc * (batch_norm ? 2 : 1) + kFloat * heads;
  // Edge side: only the attention values (float32, one per head). No per-edge messages exist.
  cost.edge = kFloat * heads;
  return cost;
}

// The gradients the backward pass of that block holds at once: of the output, the projection
// and the attention halves per node; of every attention score per edge (float32 scratch).
Cost gat_block_gradients(double heads, double channels, double act) {
  const double hc = heads * channels;
  return {act * (2 * hc + 2 * heads) + kFloat * heads, kFloat * heads};
}

// The adjacency the fused kernel walks (nn/attention_graph.hpp), built once per forward and
// shared by every layer: four int64 arrays per edge (two orders, the position map, the target
// order), the offsets per node.
constexpr Cost kAttentionGraph{2 * kIndex, 4 * kIndex};

// Parameters, their gradients and Adam's two moments.
double fixed_bytes(double parameters) { return 4 * kFloat * parameters; }

struct LayerShape {
  double in, heads, channels;
  bool batch_norm;
};

// The encoder/decoder stack: without checkpointing every block's saved tensors stay until the
// backward pass; with it only each block's input and output, plus one block recomputed during
// the backward pass. Either way one block's gradients are live on top.
Cost gat_stack(const std::vector<LayerShape>& layers, double act, bool checkpointing) {
  Cost saved;
  Cost largest_block;
  Cost largest_gradients;
  for (const auto& l : layers) {
    const auto block = gat_block_saved(l.in, l.heads, l.channels, act, l.batch_norm);
    if (checkpointing) {
      saved += {act * l.heads * l.channels, 0};  // its output, the next block's input
    } else {
      saved += block;
    }
    largest_block.node = std::max(largest_block.node, block.node);
    largest_block.edge = std::max(largest_block.edge, block.edge);
    const auto gradients = gat_block_gradients(l.heads, l.channels, act);
    largest_gradients.node = std::max(largest_gradients.node, gradients.node);
    largest_gradients.edge = std::max(largest_gradients.edge, gradients.edge);
  }
  if (checkpointing) saved += Cost{act * layers.front().in, 0} + largest_block;
  saved += largest_gradients + kAttentionGraph;
  return saved;
}

double gat_parameters(const models::GatConfig& c) {
  double in = static_cast<double>(c.embedding_dim + c.in_features - 1);
  const double hc = static_cast<double>(c.heads * c.hidden);
  double parameters = static_cast<double>(c.num_ids * c.embedding_dim);
  for (std::int64_t l = 0; l < c.layers; ++l) {
    parameters += in * hc + 3 * hc;  // weight, att_src, att_dst, bias
    in = hc;
  }
  const double jk = static_cast<double>(c.layers) * hc;
  parameters += static_cast<double>(c.fc_layers - 1) * (jk * jk + jk);
  parameters += jk * static_cast<double>(c.num_classes) + static_cast<double>(c.num_classes);
  return parameters;
}

PeakFit estimate_gat(const models::GatConfig& c, double act) {
  std::vector<LayerShape> layers;
  double in = static_cast<double>(c.embedding_dim + c.in_features - 1);
  for (std::int64_t l = 0; l < c.layers; ++l) {
    layers.push_back({in, static_cast<double>(c.heads), static_cast<double>(c.hidden), false});
    in = static_cast<double>(c.heads * c.hidden);
  }
  Cost cost = gat_stack(layers, act, c.gradient_checkpointing);
  const double jk = static_cast<double>(c.layers * c.heads * c.hidden);
  // Inputs (features, membership, edge list), the embedded input, the jumping-knowledge
  // concatenation and its gradient.
  cost.node += kFloat * static_cast<double>(c.in_features) + kIndex +
               kFloat * static_cast<double>(c.embedding_dim + c.in_features) + 2 * act * jk;
  cost.edge += 2 * kIndex;
  PeakFit fit;
  fit.fixed_bytes = fixed_bytes(gat_parameters(c));
  fit.bytes_per_node = cost.node;
  fit.bytes_per_edge = cost.edge;
  // Pooled features and the head's activations per graph, label and id.
  fit.bytes_per_graph =
      kFloat * jk * (2.0 + 3.0 * static_cast<double>(c.fc_layers - 1)) + 2 * kIndex;
  return fit;
}

double conv_parameters(const models::GatLayerShape& l) {
  // PyG's GATConv: a bias-free projection, two attention vectors and a bias, all [heads x
  // channels].
  return static_cast<double>(l.in * l.out() + 3 * l.out());
}

double vgae_parameters(const models::VgaeConfig& c, const models::VgaeLayerPlan& plan) {
  double parameters = static_cast<double>(c.num_ids * c.embedding_dim);
  for (const auto& l : plan.encoder) parameters += conv_parameters(l) + 2.0 * l.out();
  const double latent = static_cast<double>(c.latent);
  parameters += 2 * (static_cast<double>(plan.encoded) * latent + latent);
  for (const auto& l : plan.decoder) parameters += conv_parameters(l) + 2.0 * l.out();
  parameters += conv_parameters(plan.reconstruction);
  const double ids = static_cast<double>(c.num_ids);
  parameters += latent * ids + ids;  // ID classifier
  double in = latent;
  for (const auto width : plan.neighbour) {
    parameters += in * static_cast<double>(width) + static_cast<double>(width);
    in = static_cast<double>(width);
  }
  return parameters + in * ids + ids;
}

PeakFit estimate_vgae(const models::VgaeConfig& c, double act) {
  const auto plan = models::vgae_layer_plan(c);
  std::vector<LayerShape> layers;
  const auto add = [&](const models::GatLayerShape& l, bool block) {
    layers.push_back({static_cast<double>(l.in), static_cast<double>(l.heads),
                      static_cast<double>(l.channels), block});
  };
  for (const auto& l : plan.encoder) add(l, true);
  for (const auto& l : plan.decoder) add(l, true);
  add(plan.reconstruction, false);
  Cost cost = gat_stack(layers, act, c.gradient_checkpointing);
  const double ids = static_cast<double>(c.num_ids);
  const double latent = static_cast<double>(c.latent);
  double neighbour_hidden = 0;
  for (const auto width : plan.neighbour)
    neighbour_hidden += static_cast<double>(width) * (plan.neighbour_dropout ? 2 : 1);
  // The vocabulary-wide outputs dominate: ID logits and neighbour logits (kept), their float
  // copies and log-softmax / sigmoid terms in the loss, the dense neighbourhood targets, and the
  // gradients of both logits.
  const double vocabulary =
      act * 2 * ids + kFloat * ids * (act < kFloat ? 2 : 0) + kFloat * ids * 3 + kFloat * ids * 2;
  // Latent statistics (mu, logvar, noise, z), the neighbour decoder's hidden layers (and their
  // dropout masks), inputs.
  cost.node += vocabulary + act * (6 * latent + 2 * neighbour_hidden) +
               kFloat * static_cast<double>(2 * c.in_features + c.embedding_dim) + kIndex;
  cost.edge += 2 * kIndex;
  PeakFit fit;
  fit.fixed_bytes = fixed_bytes(vgae_parameters(c, plan));
  fit.bytes_per_node = cost.node;
  fit.bytes_per_edge = cost.edge;
  fit.bytes_per_graph = 2 * kIndex;
  return fit;
}

}  // namespace

PeakFit static_peak_estimate(const models::GatConfig& gat, bool reduced_precision) {
  return estimate_gat(gat, reduced_precision ? 2.0 : kFloat);
}

PeakFit static_peak_estimate(const models::VgaeConfig& vgae, bool reduced_precision) {
  return estimate_vgae(vgae, reduced_precision ? 2.0 : kFloat);
}

double model_parameter_count(const models::GatConfig& gat) { return gat_parameters(gat); }

double model_parameter_count(const models::VgaeConfig& vgae) {
  return vgae_parameters(vgae, models::vgae_layer_plan(vgae));
}

}  // namespace headroom::memory
