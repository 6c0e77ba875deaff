// The geometry of 3rd-order paths (i, j, k, p) (nn/third_order_paths.hpp) as SGMP reads it: three
// distances from the path's nodes, two bond angles at j and the dihedral between the planes
// (i, j, k) and (i, j, p); and the Gaussian smearing that turns each into a vector of features.
// Pure functions of their tensors (thread-safe); outputs are new tensors on the inputs' device.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <numbers>

namespace headroom::nn {

// Per path, float tensors [P] in pos's dtype. With b = pos_j - pos_i, c = pos_k - pos_j and
// d = pos_p - pos_j:
struct PathGeometry {
  at::Tensor d_ij;       // |b|, in the positions' unit
  at::Tensor d_jk;       // |c|
  at::Tensor d_jp;       // |d|
  at::Tensor theta_ijk;  // angle between b and c, atan2(|b x c|, b . c): radians in [0, pi]
  at::Tensor theta_ijp;  // angle between b and d: radians in [0, pi]
  // The signed dihedral between n1 = b x c and n2 = b x d: atan2(|n1 x n2|, n1 . n2), negated
  // when (n1 x n2) . b < 0, then mapped into [0, 2 pi) (radians): SGMP's reference keeps the
  // negative values and smears over [0, 2 pi], so its negative dihedrals fall below the first
  // centre; here -x becomes 2 pi - x, the same rotation, inside the smearing's range. A sign of 0
  // counts as positive, so a planar trans path is pi (the reference's sign(0) = 0 made it 0).
  at::Tensor phi;
};

// pos: float [N, D], D = 2 (taken as z = 0) or 3; paths: int64 [4, P] rows (i, j, k, p) of node
// indices, on pos's device. A degenerate path (coincident nodes) gives 0 distances, angles and
// dihedral, never NaN. Differentiable in pos except where a vector or normal vanishes
// (degenerate paths, collinear steps: atan2(0, 0)), so callers that do not need d/dpos should
// pass pos detached.
PathGeometry path_geometry(const at::Tensor& pos, const at::Tensor& paths);

// Gaussian smearing over `centres` (>= 2) centres c_0 .. c_{K-1} = linspace(start, stop, K):
// feature k of x is exp(-0.5 * ((x - c_k) / (c_1 - c_0))^2).
struct GaussianBasis {
  double start = 0.0;
  double stop = 1.0;
  std::int64_t centres = 2;

  // values: float [P] -> float [P, centres], on values's device. Throws c10::Error when
  // centres < 2 or stop <= start.
  at::Tensor expand(const at::Tensor& values) const;
};

// SGMP's defaults: distances over [0, cutoff] (in the positions' unit) with 50 centres, angles
// over [0, pi] with 6, dihedrals over [0, 2 pi] with 12.
inline GaussianBasis distance_basis(double cutoff, std::int64_t centres = 50) {
  return {0.0, cutoff, centres};
}
inline GaussianBasis angle_basis(std::int64_t centres = 6) {
  return {0.0, std::numbers::pi, centres};
}
inline GaussianBasis dihedral_basis(std::int64_t centres = 12) {
  return {0.0, 2.0 * std::numbers::pi, centres};
}

}  // namespace headroom::nn
