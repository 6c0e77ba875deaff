#include "headroom/nn/fused_gat.hpp"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cuda_plugin_table.hpp"
#include "fused_gat_kernels.hpp"


namespace headroom::nn {
namespace {

using kernels::GatBackwardArgs;
using kernels::GatDtype;
using kernels::GatForwardArgs;
using kernels::GatGraphView;

at::ScalarType attention_type(at::ScalarType h_dtype) {
  return h_dtype == at::kDouble ? at::kDouble : at::kFloat;
}

GatDtype kernel_dtype(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return GatDtype::kFloat;
    case at::kDouble:
      return GatDtype::kDouble;
    case at::kHalf:
      return GatDtype::kHalf;
    case at::kBFloat16:
      return GatDtype::kBFloat16;
    default:
      TORCH_CHECK(false, "fused GAT: unsupported dtype ", type);
  }
}

GatGraphView view_of(const AttentionGraph& graph) {
  return GatGraphView{graph.target_offsets.data_ptr<std::int64_t>(),
                      graph.source_by_target.data_ptr<std::int64_t>(),
                      graph.source_offsets.data_ptr<std::int64_t>(),
                      graph.target_by_source.data_ptr<std::int64_t>(),
                      graph.position_by_source.data_ptr<std::int64_t>(),
                      graph.num_nodes,
                      graph.num_edges()};
}

// --- CPU kernels: one node per iteration of at::parallel_for, heads and channels inside ------

template <typename T, typename Acc>
struct CpuKernel {
  GatGraphView graph;
  std::int64_t heads;
  std::int64_t channels;
  Acc slope;
  const T* h;
  const T* alpha_src;
  const T* alpha_dst;
  const Acc* dropout_scale;

  explicit CpuKernel(const GatForwardArgs& args)
      : graph(args.graph),
        heads(args.heads),
        channels(args.channels),
        slope(static_cast<Acc>(args.negative_slope)),
        h(static_cast<const T*>(args.h)),
        alpha_src(static_cast<const T*>(args.alpha_src)),
        alpha_dst(static_cast<const T*>(args.alpha_dst)),
        dropout_scale(static_cast<const Acc*>(args.dropout_scale)) {}

  Acc leaky(Acc v) const { return v > Acc(0) ? v : v * slope; }
  Acc keep(std::int64_t row, std::int64_t head) const {
    return dropout_scale == nullptr ? Acc(1) : dropout_scale[row * heads + head];
  }
  Acc pre_score(std::int64_t source, std::int64_t node, std::int64_t head) const {
    return static_cast<Acc>(alpha_src[source * heads + head]) +
           static_cast<Acc>(alpha_dst[node * heads + head]);
  }
  const T* feature_row(const T* base, std::int64_t node, std::int64_t head) const {
    return base + (node * heads + head) * channels;
  }
  static void add_scaled(Acc* sum, Acc weight, const T* row, std::int64_t channels) {
    for (std::int64_t c = 0; c < channels; ++c) sum[c] += weight * static_cast<Acc>(row[c]);
  }

  // Softmax of node's incoming scores for one head, written to attention.
  void softmax(std::int64_t node, std::int64_t head, Acc* attention) const {
    const auto begin = graph.target_offsets[node];
    const auto end = graph.target_offsets[node + 1];
    const Acc self_score = leaky(pre_score(node, node, head));
    Acc maximum = self_score;
    for (auto e = begin; e < end; ++e) {
      const auto source = graph.source_by_target[e];
      if (source != node) maximum = std::max(maximum, leaky(pre_score(source, node, head)));
    }
    Acc total = std::exp(self_score - maximum);
    for (auto e = begin; e < end; ++e) {
      const auto source = graph.source_by_target[e];
      const Acc value =
          source == node ? Acc(0) : std::exp(leaky(pre_score(source, node, head)) - maximum);
      attention[e * heads + head] = value;
      total += value;
    }
    const Acc inverse = Acc(1) / total;
    for (auto e = begin; e < end; ++e) attention[e * heads + head] *= inverse;
    attention[(graph.num_edges + node) * heads + head] = std::exp(self_score - maximum) * inverse;
  }

  void forward_node(std::int64_t node, Acc* attention, T* out, std::vector<Acc>& sum) const {
    const auto self_row = graph.num_edges + node;
    for (std::int64_t head = 0; head < heads; ++head) {
      softmax(node, head, attention);
      std::fill(sum.begin(), sum.end(), Acc(0));
      add_scaled(sum.data(), attention[self_row * heads + head] * keep(self_row, head),
                 feature_row(h, node, head), channels);
      for (auto e = graph.target_offsets[node]; e < graph.target_offsets[node + 1]; ++e) {
        const auto source = graph.source_by_target[e];
        if (source == node) continue;
        add_scaled(sum.data(), attention[e * heads + head] * keep(e, head),
                   feature_row(h, source, head), channels);
      }
      T* row = out + (node * heads + head) * channels;
      for (std::int64_t c = 0; c < channels; ++c) row[c] = static_cast<T>(sum[c]);
    }
  }

  Acc dot(const T* a, const T* b) const {
    Acc sum = Acc(0);
    for (std::int64_t c = 0; c < channels; ++c)
      sum += static_cast<Acc>(a[c]) * static_cast<Acc>(b[c]);
    return sum;
  }

  // Gradients of node's incoming scores (softmax and LeakyReLU backward) and of alpha_dst[node].
  void score_backward_node(std::int64_t node, const Acc* attention, const T* grad_out,
                           Acc* score_grad, T* grad_alpha_dst) const {
    const auto begin = graph.target_offsets[node];
    const auto end = graph.target_offsets[node + 1];
    const auto self_row = graph.num_edges + node;
    for (std::int64_t head = 0; head < heads; ++head) {
      const T* grad_row = feature_row(grad_out, node, head);
      auto weight_grad = [&](std::int64_t source, std::int64_t row) {
        return dot(grad_row, feature_row(h, source, head)) * keep(row, head);
      };
      const Acc self_grad = weight_grad(node, self_row);
      Acc weighted = attention[self_row * heads + head] * self_grad;
      for (auto e = begin; e < end; ++e) {
        const auto source = graph.source_by_target[e];
        const Acc grad = source == node ? Acc(0) : weight_grad(source, e);
        score_grad[e * heads + head] = grad;
        weighted += attention[e * heads + head] * grad;
      }
      auto through = [&](std::int64_t source, std::int64_t row, Acc grad) {
        const Acc slope_here = pre_score(source, node, head) > Acc(0) ? Acc(1) : slope;
        return attention[row * heads + head] * (grad - weighted) * slope_here;
      };
      Acc total = Acc(0);
      for (auto e = begin; e < end; ++e) {
        const auto source = graph.source_by_target[e];
        const Acc value =
            source == node ? Acc(0) : through(source, e, score_grad[e * heads + head]);
        score_grad[e * heads + head] = value;
        total += value;
      }
      const Acc self_value = through(node, self_row, self_grad);
      score_grad[self_row * heads + head] = self_value;
      grad_alpha_dst[node * heads + head] = static_cast<T>(total + self_value);
    }
  }

  // Gradients of h[node] and alpha_src[node], gathered over node's outgoing edges.
  void source_backward_node(std::int64_t node, const Acc* attention, const T* grad_out,
                            const Acc* score_grad, T* grad_h, T* grad_alpha_src,
                            std::vector<Acc>& sum) const {
    const auto begin = graph.source_offsets[node];
    const auto end = graph.source_offsets[node + 1];
    const auto self_row = graph.num_edges + node;
    for (std::int64_t head = 0; head < heads; ++head) {
      std::fill(sum.begin(), sum.end(), Acc(0));
      add_scaled(sum.data(), attention[self_row * heads + head] * keep(self_row, head),
                 feature_row(grad_out, node, head), channels);
      Acc alpha_grad = score_grad[self_row * heads + head];
      for (auto e = begin; e < end; ++e) {
        const auto row = graph.position_by_source[e];
        add_scaled(sum.data(), attention[row * heads + head] * keep(row, head),
                   feature_row(grad_out, graph.target_by_source[e], head), channels);
        alpha_grad += score_grad[row * heads + head];
      }
      T* out_row = grad_h + (node * heads + head) * channels;
      for (std::int64_t c = 0; c < channels; ++c) out_row[c] = static_cast<T>(sum[c]);
      grad_alpha_src[node * heads + head] = static_cast<T>(alpha_grad);
    }
  }
};

// Nodes per parallel task: enough work to amortise the task, small enough to balance.
constexpr std::int64_t kNodesPerTask = 64;

template <typename T, typename Acc>
void forward_cpu(const GatForwardArgs& args) {
  const CpuKernel<T, Acc> kernel(args);
  at::parallel_for(0, args.graph.num_nodes, kNodesPerTask,
                   [&](std::int64_t begin, std::int64_t end) {
                     std::vector<Acc> sum(static_cast<std::size_t>(args.channels));
                     for (auto node = begin; node < end; ++node) {
                       kernel.forward_node(node, static_cast<Acc*>(args.attention),
                                           static_cast<T*>(args.out), sum);
                     }
                   });
}

template <typename T, typename Acc>
void backward_cpu(const GatBackwardArgs& args) {
  const CpuKernel<T, Acc> kernel(args.forward);
  const auto* attention = static_cast<const Acc*>(args.forward.attention);
  const auto* grad_out = static_cast<const T*>(args.grad_out);
  auto* score_grad = static_cast<Acc*>(args.score_grad);
  const auto nodes = args.forward.graph.num_nodes;
  at::parallel_for(0, nodes, kNodesPerTask, [&](std::int64_t begin, std::int64_t end) {
    for (auto node = begin; node < end; ++node) {
      kernel.score_backward_node(node, attention, grad_out, score_grad,
                                 static_cast<T*>(args.grad_alpha_dst));
    }
  });
  at::parallel_for(0, nodes, kNodesPerTask, [&](std::int64_t begin, std::int64_t end) {
    std::vector<Acc> sum(static_cast<std::size_t>(args.forward.channels));
    for (auto node = begin; node < end; ++node) {
      kernel.source_backward_node(node, attention, grad_out, score_grad,
                                  static_cast<T*>(args.grad_h),
                                  static_cast<T*>(args.grad_alpha_src), sum);
    }
  });
}

// Calls run(T{}, Acc{}) with the element and accumulation types of `dtype`.
template <typename Run>
void dispatch_cpu(GatDtype dtype, const Run& run) {
  switch (dtype) {
    case GatDtype::kFloat:
      return run(float{}, float{});
    case GatDtype::kDouble:
      return run(double{}, double{});
    case GatDtype::kHalf:
      return run(c10::Half{}, float{});
    case GatDtype::kBFloat16:
      return run(c10::BFloat16{}, float{});
  }
}

// check_inputs has refused CUDA tensors unless the CUDA plugin (and its kernels) is loaded.
const CudaPluginTable& cuda_kernels() { return *detail::cuda_plugin_table(); }

void* current_stream(const at::Tensor& on) {
  return cuda_kernels().current_stream(on.device().index());
}

void run_forward(const GatForwardArgs& args, const at::Tensor& on) {
  if (on.is_cuda()) return cuda_kernels().gat_forward(args, current_stream(on));
  dispatch_cpu(args.dtype,
               [&](auto t, auto acc) { forward_cpu<decltype(t), decltype(acc)>(args); });
}

void run_backward(const GatBackwardArgs& args, const at::Tensor& on) {
  if (on.is_cuda()) return cuda_kernels().gat_backward(args, current_stream(on));
  dispatch_cpu(args.forward.dtype,
               [&](auto t, auto acc) { backward_cpu<decltype(t), decltype(acc)>(args); });
}

// --- autograd -----------------------------------------------------------------------------

GatForwardArgs forward_args(const at::Tensor& h, const at::Tensor& alpha_src,
                            const at::Tensor& alpha_dst, const AttentionGraph& graph,
                            double negative_slope, const at::Tensor& dropout_scale) {
  return GatForwardArgs{view_of(graph),
                        kernel_dtype(h.scalar_type()),
                        h.size(1),
                        h.size(2),
                        negative_slope,
                        h.data_ptr(),
                        alpha_src.data_ptr(),
                        alpha_dst.data_ptr(),
                        dropout_scale.defined() ? dropout_scale.data_ptr() : nullptr,
                        nullptr,
                        nullptr};
}

AttentionGraph graph_from(const torch::autograd::variable_list& saved, std::int64_t num_nodes) {
  AttentionGraph graph;
  graph.num_nodes = num_nodes;
  graph.target_offsets = saved[0];
  graph.source_by_target = saved[1];
  graph.source_offsets = saved[2];
  graph.target_by_source = saved[3];
  graph.position_by_source = saved[4];
  return graph;
}

// Passed to the autograd function as one non-tensor argument: autograd's apply() treats every
// Tensor argument as an input, and an undefined one (no dropout) has no device to route by.
struct AttentionSettings {
  double negative_slope = 0.2;
  at::Tensor dropout_scale;  // undefined without dropout
};

class FusedGatFunction : public torch::autograd::Function<FusedGatFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const at::Tensor& h, const at::Tensor& alpha_src,
                                                const at::Tensor& alpha_dst,
                                                const AttentionGraph& graph,
                                                const AttentionSettings& settings) {
    const auto& dropout_scale = settings.dropout_scale;
    const auto negative_slope = settings.negative_slope;
    auto args = forward_args(h, alpha_src, alpha_dst, graph, negative_slope, dropout_scale);
    auto out = torch::empty_like(h);
    auto attention = torch::empty({graph.num_edges() + graph.num_nodes, h.size(1)},
                                  h.options().dtype(attention_type(h.scalar_type())));
    args.out = out.data_ptr();
    args.attention = attention.data_ptr();
    run_forward(args, h);

    ctx->save_for_backward({graph.target_offsets, graph.source_by_target, graph.source_offsets,
                            graph.target_by_source, graph.position_by_source, h, alpha_src,
                            alpha_dst, attention,
                            dropout_scale.defined() ? dropout_scale : at::Tensor()});
    ctx->saved_data["num_nodes"] = graph.num_nodes;
    ctx->saved_data["negative_slope"] = negative_slope;
    ctx->mark_non_differentiable({attention});
    return {out, attention};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto graph = graph_from(saved, ctx->saved_data["num_nodes"].toInt());
    const auto& h = saved[5];
    const auto& alpha_src = saved[6];
    const auto& alpha_dst = saved[7];
    const auto& attention = saved[8];
    const auto& dropout_scale = saved[9];
    const auto grad_out = grads[0].defined() ? grads[0].contiguous() : torch::zeros_like(h);

    GatBackwardArgs args{forward_args(h, alpha_src, alpha_dst, graph,
                                      ctx->saved_data["negative_slope"].toDouble(), dropout_scale),
                         grad_out.data_ptr(),
                         nullptr,
                         nullptr,
                         nullptr,
                         nullptr};
    args.forward.attention = attention.data_ptr();
    auto score_grad = torch::empty_like(attention);
    auto grad_h = torch::empty_like(h);
    auto grad_alpha_src = torch::empty_like(alpha_src);
    auto grad_alpha_dst = torch::empty_like(alpha_dst);
    args.score_grad = score_grad.data_ptr();
    args.grad_h = grad_h.data_ptr();
    args.grad_alpha_src = grad_alpha_src.data_ptr();
    args.grad_alpha_dst = grad_alpha_dst.data_ptr();
    run_backward(args, h);
    return {grad_h, grad_alpha_src, grad_alpha_dst, at::Tensor(), at::Tensor()};
  }
};

void check_inputs(const at::Tensor& h, const at::Tensor& alpha_src, const at::Tensor& alpha_dst,
                  const AttentionGraph& graph, const at::Tensor& dropout_scale) {
  TORCH_CHECK(h.dim() == 3 && h.size(0) == graph.num_nodes, "fused GAT: h must be [",
              graph.num_nodes, ", heads, channels], got ", h.sizes());
  const std::vector<std::int64_t> per_head{graph.num_nodes, h.size(1)};
  TORCH_CHECK(alpha_src.sizes() == per_head && alpha_dst.sizes() == per_head,
              "fused GAT: alpha_src and alpha_dst must be [N, heads]");
  TORCH_CHECK(
      alpha_src.scalar_type() == h.scalar_type() && alpha_dst.scalar_type() == h.scalar_type(),
      "fused GAT: h, alpha_src and alpha_dst must share a dtype");
  TORCH_CHECK(h.device() == graph.source_by_target.device() && alpha_src.device() == h.device() &&
                  alpha_dst.device() == h.device(),
              "fused GAT: inputs and graph must be on one device");
  TORCH_CHECK(fused_gat_supported(h.device()), "fused GAT: no kernel for device ", h.device(),
              " (on CUDA the kernels come with headroom's CUDA plugin, not loaded)");
  if (dropout_scale.defined()) {
    const std::vector<std::int64_t> per_attention{graph.num_edges() + graph.num_nodes, h.size(1)};
    TORCH_CHECK(dropout_scale.sizes() == per_attention &&
                    dropout_scale.scalar_type() == attention_type(h.scalar_type()),
                "fused GAT: dropout_scale must be [E + N, heads] in the attention dtype");
  }
}

}  // namespace

bool fused_gat_supported(const c10::Device& device) {
  if (device.is_cpu()) return true;
  return device.is_cuda() && detail::cuda_plugin_table() != nullptr;
}

FusedGatResult fused_gat_attention(const at::Tensor& h, const at::Tensor& alpha_src,
                                   const at::Tensor& alpha_dst, const AttentionGraph& graph,
                                   double negative_slope, const at::Tensor& dropout_scale) {
  check_inputs(h, alpha_src, alpha_dst, graph, dropout_scale);
  const AttentionSettings settings{
      negative_slope, dropout_scale.defined() ? dropout_scale.contiguous() : dropout_scale};
  auto outputs = FusedGatFunction::apply(h.contiguous(), alpha_src.contiguous(),
                                         alpha_dst.contiguous(), graph, settings);
  return {outputs[0], outputs[1]};
}

at::Tensor attention_dropout_scale(const AttentionGraph& graph, std::int64_t heads, double p,
                                   at::ScalarType h_dtype) {
  TORCH_CHECK(p >= 0.0 && p < 1.0, "attention dropout must be in [0, 1)");
  auto options = graph.source_by_target.options().dtype(attention_type(h_dtype));
  auto keep = torch::empty({graph.num_edges() + graph.num_nodes, heads}, options);
  keep.bernoulli_(1.0 - p);
  return keep.div_(1.0 - p);
}

}  // namespace headroom::nn
