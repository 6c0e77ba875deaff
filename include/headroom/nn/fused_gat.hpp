// Fused graph attention: for every destination node, the attention scores of its incoming edges
// (plus one self loop), their softmax, and the attention-weighted sum of the source features in
// one pass, on CPU (at::parallel_for over nodes) and CUDA (one warp per node and head). It never
// holds an edges x heads x channels tensor: it keeps edges x heads attention values for the
// backward pass, which is hand-written and gathers per source, with no atomics.
//
// Semantics are PyG GATConv's message passing after the projection:
//   score_ji = LeakyReLU(alpha_src[j] + alpha_dst[i]) for edge j -> i and the self loop i -> i
//   attention_ji = softmax over i's incoming edges; out_i = sum_j drop(attention_ji) h_j
// Self-loop edges in the input are ignored and exactly one loop per node is used instead.
#pragma once

#include <ATen/core/Tensor.h>

#include "headroom/nn/attention_graph.hpp"

namespace headroom::nn {

struct FusedGatResult {
  at::Tensor out;  // [N, heads, channels] in h's dtype; differentiable in h, alpha_src, alpha_dst
  // [E + N, heads] softmax values before dropout, float32 (float64 for double inputs): rows
  // 0..E-1 are the input edges in target order (graph.target_order), 0 for self-loop edges;
  // row E + i is node i's self loop. Not differentiable.
  at::Tensor attention;
};

// h [N, heads, channels]; alpha_src, alpha_dst [N, heads]; all float32, float64, float16 or
// bfloat16 of one dtype, on the graph's device (CPU, or CUDA when headroom was built with its
// kernels). dropout_scale: undefined, or [E + N, heads] in the attention's dtype holding 0 or
// 1 / (1 - p) per attention value (see attention_dropout_scale).
FusedGatResult fused_gat_attention(const at::Tensor& h, const at::Tensor& alpha_src,
                                   const at::Tensor& alpha_dst, const AttentionGraph& graph,
                                   double negative_slope, const at::Tensor& dropout_scale = {});

// The dropout multipliers for `graph`'s attention values: Bernoulli(1 - p) / (1 - p), drawn from
// the default generator of the graph's device.
at::Tensor attention_dropout_scale(const AttentionGraph& graph, std::int64_t heads, double p,
                                   at::ScalarType h_dtype);

// Whether fused_gat_attention runs on `device` in this build (always for CPU).
bool fused_gat_supported(const c10::Device& device);

}  // namespace headroom::nn
