#include "headroom/nn/gat_conv.hpp"

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>

#include "headroom/nn/fused_gat.hpp"
#include "headroom/nn/segment_ops.hpp"

namespace headroom::nn {
namespace {

// PyG's glorot: U(-a, a) with a = sqrt(6 / (fan_in + fan_out)) taken from the last two
// dimensions, so an attention vector [1, H, C] gets a = sqrt(6 / (H + C)). (torch's
// xavier_uniform_ would read a [1, H, C] tensor as fan_in H*C, fan_out C.)
void glorot_(at::Tensor& tensor) {
  const auto fan_sum = tensor.size(-2) + tensor.size(-1);
  const double bound = std::sqrt(6.0 / static_cast<double>(fan_sum));
  tensor.uniform_(-bound, bound);
}

// PyG's remove_self_loops followed by add_self_loops: one loop per node, appended after the
// remaining edges. The mask selection needs the number of kept edges, a host sync on CUDA.
at::Tensor with_single_self_loops(const at::Tensor& edge_index, std::int64_t num_nodes) {
  auto keep = edge_index[0] != edge_index[1];
  auto kept = edge_index.index_select(1, keep.nonzero().view(-1));
  auto loop = torch::arange(num_nodes, edge_index.options());
  return torch::cat({kept, torch::stack({loop, loop})}, 1);
}

}  // namespace

GATConvImpl::GATConvImpl(const GATConvOptions& options) : options_(options) {
  if (options.in_channels <= 0 || options.out_channels <= 0 || options.heads <= 0) {
    throw std::invalid_argument("GATConv: in_channels, out_channels and heads must be positive");
  }
  if (options.dropout < 0.0 || options.dropout >= 1.0) {
    throw std::invalid_argument("GATConv: dropout must be in [0, 1)");
  }
  const auto heads = options.heads;
  const auto channels = options.out_channels;
  weight = register_parameter("weight", torch::empty({heads * channels, options.in_channels}));
  att_src = register_parameter("att_src", torch::empty({1, heads, channels}));
  att_dst = register_parameter("att_dst", torch::empty({1, heads, channels}));
  if (options.bias) {
    bias_ = register_parameter("bias", torch::empty({output_channels()}));
  }
  reset_parameters();
}

void GATConvImpl::reset_parameters() {
  torch::NoGradGuard no_grad;
  glorot_(weight);
  glorot_(att_src);
  glorot_(att_dst);
  if (bias_.defined()) bias_.zero_();
}

std::int64_t GATConvImpl::output_channels() const {
  return options_.concat ? options_.heads * options_.out_channels : options_.out_channels;
}

at::Tensor GATConvImpl::forward(const at::Tensor& x, const at::Tensor& edge_index) {
  if (!runs_fused(x)) return forward_with_attention(x, edge_index).out;
  return forward(x, build_attention_graph(edge_index, x.size(0)));
}

at::Tensor GATConvImpl::forward(const at::Tensor& x, const AttentionGraph& graph) {
  if (!runs_fused(x)) return forward_with_attention(x, graph.edge_index).out;
  check_input(x);
  TORCH_CHECK(graph.num_nodes == x.size(0), "GATConv: graph has ", graph.num_nodes,
              " nodes but x has ", x.size(0), " rows");
  const auto projected = project(x);
  at::Tensor dropout_scale;
  if (is_training() && options_.dropout > 0.0) {
    dropout_scale =
        attention_dropout_scale(graph, options_.heads, options_.dropout, projected.h.scalar_type());
  }
  return finish(fused_gat_attention(projected.h, projected.alpha_src, projected.alpha_dst, graph,
                                    options_.negative_slope, dropout_scale)
                    .out);
}

// The kernel always adds one self loop per node, so a layer without self loops keeps the
// reference formulation.
bool GATConvImpl::runs_fused(const at::Tensor& x) const {
  return options_.fused && options_.add_self_loops && fused_gat_supported(x.device());
}

void GATConvImpl::check_input(const at::Tensor& x) const {
  TORCH_CHECK(x.dim() == 2 && x.size(1) == options_.in_channels, "GATConv: x must be [N, ",
              options_.in_channels, "], got ", x.sizes());
}

GATConvImpl::Projection GATConvImpl::project(const at::Tensor& x) const {
  const auto heads = options_.heads;
  const auto channels = options_.out_channels;
  // Under autocast the projection may come out in reduced precision; everything after follows
  // h's dtype so that the attention operations see matching types.
  auto h = torch::nn::functional::linear(x, weight).view({x.size(0), heads, channels});
  const auto dtype = h.scalar_type();
  // alpha_src[n, k] = (x_n W_k^T) . a_k = x_n . (a_k W_k): the attention vectors are folded into
  // the weight first ([2H, in], tiny), so one thin GEMM gives both scores instead of an
  // elementwise product over [N, H, C] per score (an N x H x C temporary each, and its gradient).
  const auto per_head = weight.view({heads, channels, options_.in_channels});
  const auto folded = torch::cat({torch::bmm(att_src.view({heads, 1, channels}), per_head),
                                  torch::bmm(att_dst.view({heads, 1, channels}), per_head)},
                                 0)
                          .view({2 * heads, options_.in_channels});
  const auto scores = torch::nn::functional::linear(x, folded).to(dtype);  // [N, 2H]
  return {h, scores.slice(1, 0, heads).contiguous(), scores.slice(1, heads).contiguous()};
}

at::Tensor GATConvImpl::finish(const at::Tensor& per_head) const {
  const auto dtype = per_head.scalar_type();
  const auto num_nodes = per_head.size(0);
  auto out = options_.concat ? per_head.reshape({num_nodes, options_.heads * options_.out_channels})
                             : per_head.mean(1).to(dtype);
  if (bias_.defined()) out = out + bias_.to(dtype);
  return out;
}

GATConvResult GATConvImpl::forward_with_attention(const at::Tensor& x,
                                                  const at::Tensor& edge_index) {
  check_input(x);
  TORCH_CHECK(
      edge_index.dim() == 2 && edge_index.size(0) == 2 && edge_index.scalar_type() == at::kLong,
      "GATConv: edge_index must be int64 [2, E], got ", edge_index.sizes());
  const auto num_nodes = x.size(0);
  const auto [h, alpha_src, alpha_dst] = project(x);
  const auto dtype = h.scalar_type();

  auto edges = options_.add_self_loops ? with_single_self_loops(edge_index, num_nodes) : edge_index;
  auto source = edges[0];
  auto target = edges[1];

  auto scores =
      torch::leaky_relu(alpha_src.index_select(0, source) + alpha_dst.index_select(0, target),
                        options_.negative_slope);
  auto attention = segment_softmax(scores, target, num_nodes);  // [E', H]
  attention = torch::dropout(attention, options_.dropout, is_training());

  auto messages = h.index_select(0, source) * attention.unsqueeze(-1).to(dtype);  // [E', H, C]
  auto out = segment_sum(messages, target, num_nodes);                            // [N, H, C]
  return {finish(out), edges, attention};
}

}  // namespace headroom::nn
