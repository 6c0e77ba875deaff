// CUDA kernels of the fused graph attention (fused_gat_kernels.hpp). One warp per (node, head):
// lanes split a node's edges for the softmax statistics and its feature channels for the
// weighted sums, so no edges x heads x channels tensor ever exists. Sums accumulate in float
// (double for double inputs) and are written once; no atomics, so results are deterministic.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "fused_gat_kernels.hpp"

namespace headroom::nn::kernels {
namespace {

constexpr int kWarp = 32;
constexpr int kBlock = 256;

template <typename Acc>
struct Math;
template <>
struct Math<float> {
  static __device__ float exp(float v) { return ::expf(v); }
  static __device__ float max(float a, float b) { return ::fmaxf(a, b); }
};
template <>
struct Math<double> {
  static __device__ double exp(double v) { return ::exp(v); }
  static __device__ double max(double a, double b) { return ::fmax(a, b); }
};

template <typename Acc>
__device__ Acc warp_sum(Acc v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

template <typename Acc>
__device__ Acc warp_max(Acc v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    v = Math<Acc>::max(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;
}

template <typename T, typename Acc>
__device__ Acc load(const T* p, std::int64_t i) {
  return static_cast<Acc>(p[i]);
}

template <typename T, typename Acc>
struct Kernel {
  GatGraphView graph;
  std::int64_t heads;
  std::int64_t channels;
  Acc slope;
  const T* h;
  const T* alpha_src;
  const T* alpha_dst;
  const Acc* dropout_scale;

  __device__ Acc leaky(Acc v) const { return v > Acc(0) ? v : v * slope; }
  __device__ Acc keep(std::int64_t row, std::int64_t head) const {
    return dropout_scale == nullptr ? Acc(1) : dropout_scale[row * heads + head];
  }
  __device__ Acc score(std::int64_t source, std::int64_t head, Acc dst) const {
    return leaky(load<T, Acc>(alpha_src, source * heads + head) + dst);
  }
};

// The (node, head) pair a warp works on, and the calling thread's lane within the warp; every
// kernel here launches num_nodes * heads warps (grid_for).
struct WarpTask {
  std::int64_t node;
  std::int64_t head;
  int lane;
  bool valid;  // false for the padding threads of the last block
};

__device__ WarpTask warp_task(std::int64_t num_nodes, std::int64_t heads) {
  const std::int64_t warp =
      (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  return {warp / heads, warp % heads, lane, warp < num_nodes * heads};
}

// out[i, k, :] = sum over i's incoming edges and its self loop of softmax(score) * h[source, k, :].
template <typename T, typename Acc>
__global__ void forward_kernel(Kernel<T, Acc> kernel, T* out, Acc* attention) {
  const auto task = warp_task(kernel.graph.num_nodes, kernel.heads);
  if (!task.valid) return;
  const auto& graph = kernel.graph;
  const std::int64_t heads = kernel.heads;
  const std::int64_t node = task.node;
  const std::int64_t head = task.head;
  const int lane = task.lane;
  const std::int64_t begin = graph.target_offsets[node];
  const std::int64_t end = graph.target_offsets[node + 1];
  const Acc dst = load<T, Acc>(kernel.alpha_dst, node * heads + head);
  const Acc self_score = kernel.score(node, head, dst);

  Acc maximum = self_score;
  for (std::int64_t e = begin + lane; e < end; e += kWarp) {
    const std::int64_t source = graph.source_by_target[e];
    if (source != node) maximum = Math<Acc>::max(maximum, kernel.score(source, head, dst));
  }
  maximum = warp_max(maximum);
  Acc total = Acc(0);
  for (std::int64_t e = begin + lane; e < end; e += kWarp) {
    const std::int64_t source = graph.source_by_target[e];
    if (source != node) total += Math<Acc>::exp(kernel.score(source, head, dst) - maximum);
  }
  const Acc inverse = Acc(1) / (warp_sum(total) + Math<Acc>::exp(self_score - maximum));

  for (std::int64_t e = begin + lane; e < end; e += kWarp) {
    const std::int64_t source = graph.source_by_target[e];
    attention[e * heads + head] =
        source == node ? Acc(0)
                       : Math<Acc>::exp(kernel.score(source, head, dst) - maximum) * inverse;
  }
  const Acc self_weight = Math<Acc>::exp(self_score - maximum) * inverse;
  const std::int64_t self_row = graph.num_edges + node;
  if (lane == 0) attention[self_row * heads + head] = self_weight;

  const std::int64_t channels = kernel.channels;
  const Acc self_kept = self_weight * kernel.keep(self_row, head);
  for (std::int64_t c = lane; c < channels; c += kWarp) {
    Acc sum = self_kept * load<T, Acc>(kernel.h, (node * heads + head) * channels + c);
    for (std::int64_t e = begin; e < end; ++e) {
      const std::int64_t source = graph.source_by_target[e];
      if (source == node) continue;
      const Acc weight = Math<Acc>::exp(kernel.score(source, head, dst) - maximum) * inverse *
                         kernel.keep(e, head);
      sum += weight * load<T, Acc>(kernel.h, (source * heads + head) * channels + c);
    }
    out[(node * heads + head) * channels + c] = static_cast<T>(sum);
  }
}

// Per destination: the gradient of every incoming score (softmax and LeakyReLU backward) and
// of alpha_dst.
template <typename T, typename Acc>
__global__ void score_backward_kernel(Kernel<T, Acc> kernel, const Acc* attention,
                                      const T* grad_out, Acc* score_grad, T* grad_alpha_dst) {
  const auto task = warp_task(kernel.graph.num_nodes, kernel.heads);
  if (!task.valid) return;
  const auto& graph = kernel.graph;
  const std::int64_t heads = kernel.heads;
  const std::int64_t node = task.node;
  const std::int64_t head = task.head;
  const int lane = task.lane;
  const std::int64_t begin = graph.target_offsets[node];
  const std::int64_t end = graph.target_offsets[node + 1];
  const std::int64_t channels = kernel.channels;
  const T* grad_row = grad_out + (node * heads + head) * channels;
  auto weight_grad = [&](std::int64_t source, std::int64_t row) {
    Acc dot = Acc(0);
    for (std::int64_t c = lane; c < channels; c += kWarp) {
      dot += load<T, Acc>(grad_row, c) *
             load<T, Acc>(kernel.h, (source * heads + head) * channels + c);
    }
    return warp_sum(dot) * kernel.keep(row, head);
  };

  // Pass 1: d(attention) per edge, and sum(attention * d(attention)) for the softmax backward.
  const std::int64_t self_row = graph.num_edges + node;
  const Acc self_grad = weight_grad(node, self_row);
  Acc weighted = attention[self_row * heads + head] * self_grad;
  for (std::int64_t e = begin; e < end; ++e) {
    const std::int64_t source = graph.source_by_target[e];
    const Acc grad = source == node ? Acc(0) : weight_grad(source, e);
    weighted += attention[e * heads + head] * grad;
    if (lane == 0) score_grad[e * heads + head] = grad;
  }
  __syncwarp();

  // Pass 2: through the softmax and the LeakyReLU.
  const Acc dst = load<T, Acc>(kernel.alpha_dst, node * heads + head);
  auto through = [&](std::int64_t source, Acc attention_value, Acc grad) {
    const Acc pre = load<T, Acc>(kernel.alpha_src, source * heads + head) + dst;
    return attention_value * (grad - weighted) * (pre > Acc(0) ? Acc(1) : kernel.slope);
  };
  Acc total = Acc(0);
  for (std::int64_t e = begin + lane; e < end; e += kWarp) {
    const std::int64_t source = graph.source_by_target[e];
    const Acc value =
        source == node ? Acc(0)
                       : through(source, attention[e * heads + head], score_grad[e * heads + head]);
    score_grad[e * heads + head] = value;
    total += value;
  }
  total = warp_sum(total);
  if (lane == 0) {
    const Acc self_value = through(node, attention[self_row * heads + head], self_grad);
    score_grad[self_row * heads + head] = self_value;
    grad_alpha_dst[node * heads + head] = static_cast<T>(total + self_value);
  }
}

// Per source: gradient of its feature row (attention-weighted output gradients of the nodes it
// feeds) and of alpha_src (the scores it took part in).
template <typename T, typename Acc>
__global__ void source_backward_kernel(Kernel<T, Acc> kernel, const Acc* attention,
                                       const T* grad_out, const Acc* score_grad, T* grad_h,
                                       T* grad_alpha_src) {
  const auto task = warp_task(kernel.graph.num_nodes, kernel.heads);
  if (!task.valid) return;
  const auto& graph = kernel.graph;
  const std::int64_t heads = kernel.heads;
  const std::int64_t node = task.node;
  const std::int64_t head = task.head;
  const int lane = task.lane;
  const std::int64_t begin = graph.source_offsets[node];
  const std::int64_t end = graph.source_offsets[node + 1];
  const std::int64_t channels = kernel.channels;
  const std::int64_t self_row = graph.num_edges + node;
  const Acc self_weight = attention[self_row * heads + head] * kernel.keep(self_row, head);

  for (std::int64_t c = lane; c < channels; c += kWarp) {
    Acc sum = self_weight * load<T, Acc>(grad_out, (node * heads + head) * channels + c);
    for (std::int64_t e = begin; e < end; ++e) {
      const std::int64_t row = graph.position_by_source[e];
      const std::int64_t target = graph.target_by_source[e];
      const Acc weight = attention[row * heads + head] * kernel.keep(row, head);
      sum += weight * load<T, Acc>(grad_out, (target * heads + head) * channels + c);
    }
    grad_h[(node * heads + head) * channels + c] = static_cast<T>(sum);
  }
  Acc total = Acc(0);
  for (std::int64_t e = begin + lane; e < end; e += kWarp) {
    total += score_grad[graph.position_by_source[e] * heads + head];
  }
  total = warp_sum(total);
  if (lane == 0) {
    grad_alpha_src[node * heads + head] =
        static_cast<T>(total + score_grad[self_row * heads + head]);
  }
}

void check_launch(const char* what) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("fused GAT: ") + what +
                             " launch failed: " + cudaGetErrorString(status));
  }
}

template <typename T, typename Acc>
Kernel<T, Acc> make_kernel(const GatForwardArgs& args) {
  return Kernel<T, Acc>{args.graph,
                        args.heads,
                        args.channels,
                        static_cast<Acc>(args.negative_slope),
                        static_cast<const T*>(args.h),
                        static_cast<const T*>(args.alpha_src),
                        static_cast<const T*>(args.alpha_dst),
                        static_cast<const Acc*>(args.dropout_scale)};
}

unsigned grid_for(const GatForwardArgs& args) {
  const std::int64_t threads = args.graph.num_nodes * args.heads * kWarp;
  return static_cast<unsigned>((threads + kBlock - 1) / kBlock);
}

template <typename T, typename Acc>
void forward_typed(const GatForwardArgs& args, cudaStream_t stream) {
  if (args.graph.num_nodes == 0) return;
  forward_kernel<T, Acc><<<grid_for(args), kBlock, 0, stream>>>(
      make_kernel<T, Acc>(args), static_cast<T*>(args.out), static_cast<Acc*>(args.attention));
  check_launch("forward");
}

template <typename T, typename Acc>
void backward_typed(const GatBackwardArgs& args, cudaStream_t stream) {
  const auto& forward = args.forward;
  if (forward.graph.num_nodes == 0) return;
  const auto kernel = make_kernel<T, Acc>(forward);
  const auto* attention = static_cast<const Acc*>(forward.attention);
  const auto* grad_out = static_cast<const T*>(args.grad_out);
  auto* score_grad = static_cast<Acc*>(args.score_grad);
  score_backward_kernel<T, Acc><<<grid_for(forward), kBlock, 0, stream>>>(
      kernel, attention, grad_out, score_grad, static_cast<T*>(args.grad_alpha_dst));
  check_launch("score backward");
  source_backward_kernel<T, Acc><<<grid_for(forward), kBlock, 0, stream>>>(
      kernel, attention, grad_out, score_grad, static_cast<T*>(args.grad_h),
      static_cast<T*>(args.grad_alpha_src));
  check_launch("source backward");
}

}  // namespace

void gat_forward_cuda(const GatForwardArgs& args, void* stream) {
  auto* cuda_stream = static_cast<cudaStream_t>(stream);
  switch (args.dtype) {
    case GatDtype::kFloat:
      return forward_typed<float, float>(args, cuda_stream);
    case GatDtype::kDouble:
      return forward_typed<double, double>(args, cuda_stream);
    case GatDtype::kHalf:
      return forward_typed<__half, float>(args, cuda_stream);
    case GatDtype::kBFloat16:
      return forward_typed<__nv_bfloat16, float>(args, cuda_stream);
  }
}

void gat_backward_cuda(const GatBackwardArgs& args, void* stream) {
  auto* cuda_stream = static_cast<cudaStream_t>(stream);
  switch (args.forward.dtype) {
    case GatDtype::kFloat:
      return backward_typed<float, float>(args, cuda_stream);
    case GatDtype::kDouble:
      return backward_typed<double, double>(args, cuda_stream);
    case GatDtype::kHalf:
      return backward_typed<__half, float>(args, cuda_stream);
    case GatDtype::kBFloat16:
      return backward_typed<__nv_bfloat16, float>(args, cuda_stream);
  }
}

}  // namespace headroom::nn::kernels
