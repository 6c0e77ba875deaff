// The raw-pointer interface between the fused graph-attention autograd function
// (fused_gat.cpp) and its CUDA kernels (fused_gat_cuda.cu). Kept free of torch and CUDA headers
// so that nvcc compiles the kernels without the LibTorch headers and g++ calls them without
// the CUDA ones. Internal to the nn area.
#pragma once

#include <cstdint>

namespace headroom::nn::kernels {

// Pointers into an AttentionGraph's int64 tensors on the device (see attention_graph.hpp).
struct GatGraphView {
  const std::int64_t* target_offsets;
  const std::int64_t* source_by_target;
  const std::int64_t* source_offsets;
  const std::int64_t* target_by_source;
  const std::int64_t* position_by_source;
  std::int64_t num_nodes;
  std::int64_t num_edges;
};

enum class GatDtype { kFloat, kDouble, kHalf, kBFloat16 };

// h [N, heads, channels], alpha_* [N, heads] and every gradient in `dtype`; attention, scores
// and dropout_scale [E + N, heads] in the accumulation type (double for kDouble, else float).
// dropout_scale may be null (no dropout).
struct GatForwardArgs {
  GatGraphView graph;
  GatDtype dtype;
  std::int64_t heads;
  std::int64_t channels;
  double negative_slope;
  const void* h;
  const void* alpha_src;
  const void* alpha_dst;
  const void* dropout_scale;
  void* out;        // [N, heads, channels]
  void* attention;  // [E + N, heads]: softmax before dropout; self-loop edges of the input get 0
};

struct GatBackwardArgs {
  GatForwardArgs forward;  // out unused; attention is read
  const void* grad_out;    // [N, heads, channels]
  void* score_grad;        // scratch [E + N, heads]: gradient of each pre-softmax score
  void* grad_h;            // [N, heads, channels]
  void* grad_alpha_src;    // [N, heads]
  void* grad_alpha_dst;    // [N, heads]
};

// Enqueue on `stream` (a cudaStream_t); never synchronise the host. Throw std::runtime_error
// when a launch fails. Defined only when headroom is built with its CUDA kernels.
void gat_forward_cuda(const GatForwardArgs& args, void* stream);
void gat_backward_cuda(const GatBackwardArgs& args, void* stream);

}  // namespace headroom::nn::kernels
