#include "headroom/nn/path_geometry.hpp"

#include <torch/torch.h>

namespace headroom::nn {
namespace {

// Rows of `pos3` at the path's `row`-th nodes.
at::Tensor at_nodes(const at::Tensor& pos3, const at::Tensor& paths, std::int64_t row) {
  return pos3.index_select(0, paths[row]);
}

at::Tensor row_dot(const at::Tensor& a, const at::Tensor& b) { return (a * b).sum(1); }

at::Tensor row_length(const at::Tensor& a) { return at::linalg_vector_norm(a, 2, {1}); }

// atan2(|a x b|, a . b): 0 for a vanishing vector (atan2(0, 0) = 0), never NaN.
at::Tensor angle(const at::Tensor& a, const at::Tensor& b) {
  return at::atan2(row_length(at::linalg_cross(a, b, 1)), row_dot(a, b));
}

// The signed angle from n1 to n2 about `axis`, in [0, 2 pi).
at::Tensor dihedral(const at::Tensor& n1, const at::Tensor& n2, const at::Tensor& axis) {
  const auto normal = at::linalg_cross(n1, n2, 1);
  const auto unsigned_phi = at::atan2(row_length(normal), row_dot(n1, n2));
  const auto phi = at::where(row_dot(normal, axis) < 0, -unsigned_phi, unsigned_phi);
  const double two_pi = 2.0 * std::numbers::pi;
  const auto wrapped = at::where(phi < 0, phi + two_pi, phi);
  // A tiny negative angle plus 2 pi can round up to 2 pi itself (the comparison is in the
  // tensor's dtype): that is angle 0.
  return at::where(wrapped >= two_pi, at::zeros_like(wrapped), wrapped);
}

}  // namespace

PathGeometry path_geometry(const at::Tensor& pos, const at::Tensor& paths) {
  TORCH_CHECK(pos.dim() == 2 && (pos.size(1) == 2 || pos.size(1) == 3),
              "path geometry: pos must be [N, 2] or [N, 3], got ", pos.sizes());
  TORCH_CHECK(paths.dim() == 2 && paths.size(0) == 4 && paths.scalar_type() == at::kLong,
              "path geometry: paths must be int64 [4, P], got ", paths.scalar_type(), " ",
              paths.sizes());
  const auto pos3 = pos.size(1) == 3 ? pos : at::constant_pad_nd(pos, {0, 1}, 0.0);
  const auto pj = at_nodes(pos3, paths, 1);
  const auto b = pj - at_nodes(pos3, paths, 0);
  const auto c = at_nodes(pos3, paths, 2) - pj;
  const auto d = at_nodes(pos3, paths, 3) - pj;
  PathGeometry geometry;
  geometry.d_ij = row_length(b);
  geometry.d_jk = row_length(c);
  geometry.d_jp = row_length(d);
  geometry.theta_ijk = angle(b, c);
  geometry.theta_ijp = angle(b, d);
  geometry.phi = dihedral(at::linalg_cross(b, c, 1), at::linalg_cross(b, d, 1), b);
  return geometry;
}

at::Tensor GaussianBasis::expand(const at::Tensor& values) const {
  TORCH_CHECK(centres >= 2 && stop > start, "Gaussian basis: needs >= 2 centres over a range ",
              "with stop > start, got ", centres, " over [", start, ", ", stop, "]");
  const auto offsets = torch::linspace(start, stop, centres, values.options());
  const double width = (stop - start) / static_cast<double>(centres - 1);
  const auto scaled = (values.reshape({-1, 1}) - offsets.reshape({1, -1})) / width;
  return at::exp(-0.5 * scaled * scaled);
}

}  // namespace headroom::nn
