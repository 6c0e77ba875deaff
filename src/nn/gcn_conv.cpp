#include "headroom/nn/gcn_conv.hpp"

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>

#include "headroom/nn/segment_ops.hpp"

namespace headroom::nn {
namespace {

// edge_index with a self-loop appended for every node that has none.
at::Tensor with_remaining_self_loops(const at::Tensor& edge_index, std::int64_t num_nodes) {
  const auto source = edge_index[0];
  const auto target = edge_index[1];
  auto has_loop = torch::zeros({num_nodes}, edge_index.options().dtype(torch::kBool));
  const auto loops = source == target;
  has_loop.index_put_({target.masked_select(loops)}, torch::ones({}, has_loop.options()));
  const auto missing = torch::arange(num_nodes, edge_index.options()).masked_select(~has_loop);
  return torch::cat({edge_index, torch::stack({missing, missing})}, 1);
}

}  // namespace

GCNConvImpl::GCNConvImpl(const GCNConvOptions& options) : options_(options) {
  if (options_.in_channels <= 0 || options_.out_channels <= 0)
    throw std::invalid_argument("GCNConv: in_channels and out_channels must be positive");
  weight =
      register_parameter("weight", torch::empty({options_.out_channels, options_.in_channels}));
  if (options_.bias) bias_ = register_parameter("bias", torch::empty({options_.out_channels}));
  reset_parameters();
}

void GCNConvImpl::reset_parameters() {
  torch::NoGradGuard no_grad;
  const double bound =
      std::sqrt(6.0 / static_cast<double>(options_.in_channels + options_.out_channels));
  weight.uniform_(-bound, bound);
  if (bias_.defined()) bias_.zero_();
}

at::Tensor GCNConvImpl::forward(const at::Tensor& x, const at::Tensor& edge_index) {
  TORCH_CHECK(x.dim() == 2 && x.size(1) == options_.in_channels, "GCNConv: x must be [N, ",
              options_.in_channels, "], got ", x.sizes());
  TORCH_CHECK(edge_index.dim() == 2 && edge_index.size(0) == 2,
              "GCNConv: edge_index must be [2, E], got ", edge_index.sizes());
  const auto num_nodes = x.size(0);
  const auto edges = with_remaining_self_loops(edge_index.to(torch::kLong), num_nodes);
  const auto source = edges[0];
  const auto target = edges[1];

  const auto h = torch::matmul(x, weight.t());
  // Degrees in fp32 whatever the autocast dtype: they are counts up to the largest in-degree.
  const auto ones = torch::ones({edges.size(1), 1}, x.options().dtype(torch::kFloat));
  const auto degree = segment_sum(ones, target, num_nodes).squeeze(1);
  const auto inverse_sqrt = degree.pow(-0.5).masked_fill(degree == 0, 0.0);
  const auto norm = (inverse_sqrt.index_select(0, source) * inverse_sqrt.index_select(0, target))
                        .to(h.scalar_type())
                        .unsqueeze(1);
  auto out = segment_sum(h.index_select(0, source) * norm, target, num_nodes);
  if (bias_.defined()) out = out + bias_.to(out.scalar_type());
  return out;
}

}  // namespace headroom::nn
