#include "headroom/nn/segment_ops.hpp"

#include <torch/torch.h>

#include <vector>

namespace headroom::nn {
namespace {

void check_index(const at::Tensor& src, const at::Tensor& index, const char* what) {
  TORCH_CHECK(index.dim() == 1, what, ": index must be 1-D, got ", index.dim(), " dimensions");
  TORCH_CHECK(index.scalar_type() == at::kLong, what, ": index must be int64");
  TORCH_CHECK(src.dim() >= 1 && src.size(0) == index.size(0), what, ": src has ",
              src.dim() >= 1 ? src.size(0) : 0, " rows but index has ", index.size(0));
}

// Half-precision sums and exponentials lose too much: reductions run in float32 and only the
// result is cast back (this also keeps the dtype independent of autocast, which turns exp/sum
// outputs into float32 on CUDA).
at::ScalarType accumulate_type(at::ScalarType type) {
  return (type == at::kHalf || type == at::kBFloat16) ? at::kFloat : type;
}

std::vector<std::int64_t> segment_shape(const at::Tensor& src, std::int64_t num_segments) {
  std::vector<std::int64_t> shape(src.sizes().begin(), src.sizes().end());
  shape[0] = num_segments;
  return shape;
}

// index [E] viewed as [E, 1, ...] and broadcast to src's shape, as scatter_reduce wants.
at::Tensor expand_index(const at::Tensor& index, const at::Tensor& src) {
  std::vector<std::int64_t> view(static_cast<std::size_t>(src.dim()), 1);
  view[0] = index.size(0);
  return index.view(view).expand_as(src);
}

// Per-segment row counts as [num_segments, 1, ...] in `type`; an empty segment counts 1 so that
// its mean is 0 / 1 = 0.
at::Tensor segment_counts(const at::Tensor& src, const at::Tensor& index, std::int64_t num_segments,
                          at::ScalarType type) {
  auto options = src.options().dtype(type);
  auto counts = torch::zeros({num_segments}, options)
                    .index_add_(0, index, torch::ones({index.size(0)}, options))
                    .clamp_min_(1);
  std::vector<std::int64_t> view(static_cast<std::size_t>(src.dim()), 1);
  view[0] = num_segments;
  return counts.view(view);
}

}  // namespace

at::Tensor segment_softmax(const at::Tensor& src, const at::Tensor& index,
                           std::int64_t num_segments) {
  check_index(src, index, "segment_softmax");
  const auto out_type = src.scalar_type();
  auto values = src.to(accumulate_type(out_type));
  auto shape = segment_shape(values, num_segments);
  // The maximum is only a shift for stability: softmax does not depend on it, so it carries no
  // gradient (and scatter_reduce's amax backward is not needed).
  auto maximum = torch::zeros(shape, values.options())
                     .scatter_reduce_(0, expand_index(index, values), values.detach(), "amax",
                                      /*include_self=*/false);
  auto exps = (values - maximum.index_select(0, index)).exp();
  auto sums = torch::zeros(shape, values.options()).index_add_(0, index, exps);
  return (exps / sums.index_select(0, index)).to(out_type);
}

at::Tensor segment_sum(const at::Tensor& src, const at::Tensor& index, std::int64_t num_segments) {
  check_index(src, index, "segment_sum");
  return torch::zeros(segment_shape(src, num_segments), src.options()).index_add_(0, index, src);
}

at::Tensor segment_mean(const at::Tensor& src, const at::Tensor& index, std::int64_t num_segments) {
  check_index(src, index, "segment_mean");
  const auto out_type = src.scalar_type();
  const auto acc_type = accumulate_type(out_type);
  // The sum is already reduced to num_segments rows, so dividing it in float32 costs little and
  // keeps large counts exact.
  auto sums = segment_sum(src, index, num_segments).to(acc_type);
  return (sums / segment_counts(src, index, num_segments, acc_type)).to(out_type);
}

}  // namespace headroom::nn
