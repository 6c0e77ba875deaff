// nn/path_geometry.hpp: hand-worked paths (a 3-4-5 triangle, a right angle, collinear steps, the
// planar cis and trans paths, dihedrals of +90 and -90 degrees, a degenerate path), random paths
// against a second dihedral formula in double precision (projections onto the plane normal to
// i->j), invariance under rotation and translation, and the Gaussian smearing worked by hand.
#include "headroom/nn/path_geometry.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <array>
#include <cmath>
#include <numbers>
#include <vector>

namespace headroom::nn {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kTolerance = 1e-5;

using Point = std::array<double, 3>;

// One path (0, 1, 2, 3) through the four given points.
PathGeometry one_path(const Point& i, const Point& j, const Point& k, const Point& p) {
  std::vector<float> values;
  for (const auto& point : {i, j, k, p})
    for (const double c : point) values.push_back(static_cast<float>(c));
  const auto pos = torch::tensor(values, torch::kFloat).reshape({4, 3});
  return path_geometry(pos, torch::tensor({0, 1, 2, 3}, torch::kInt64).reshape({4, 1}));
}

double value(const at::Tensor& t) { return t.item<double>(); }

TEST(GeometricFeatures, DistancesOfATriangleAndARightAngle) {
  // b = j - i = (3, 4, 0), c = k - j = (-4, 3, 0): |b| = 5, |c| = 5, b . c = 0.
  const auto g = one_path({0, 0, 0}, {3, 4, 0}, {-1, 7, 0}, {3, 4, 2});
  EXPECT_NEAR(value(g.d_ij), 5.0, kTolerance);
  EXPECT_NEAR(value(g.d_jk), 5.0, kTolerance);
  EXPECT_NEAR(value(g.d_jp), 2.0, kTolerance);
  EXPECT_NEAR(value(g.theta_ijk), kPi / 2, kTolerance);
  EXPECT_NEAR(value(g.theta_ijp), kPi / 2, kTolerance);  // d = (0, 0, 2) is normal to b too
}

TEST(GeometricFeatures, CollinearStepsAreZeroForwardAndPiBack) {
  const auto forward = one_path({0, 0, 0}, {1, 0, 0}, {3, 0, 0}, {0.5, 0, 0});
  EXPECT_NEAR(value(forward.theta_ijk), 0.0, kTolerance);  // k goes on in b's direction
  EXPECT_NEAR(value(forward.theta_ijp), kPi, kTolerance);  // p goes back towards i
  EXPECT_NEAR(value(forward.d_jp), 0.5, kTolerance);
  // 45 degrees: b = (1, 0, 0), c = (1, 1, 0).
  const auto bent = one_path({0, 0, 0}, {1, 0, 0}, {2, 1, 0}, {1, 0, 1});
  EXPECT_NEAR(value(bent.theta_ijk), kPi / 4, kTolerance);
}

TEST(GeometricFeatures, PlanarCisIsZeroAndTransIsPi) {
  // b along x; k above the axis (y > 0); p on the same side (cis) or the other (trans).
  const Point i{0, 0, 0};
  const Point j{1, 0, 0};
  const Point k{1.5, 1, 0};
  EXPECT_NEAR(value(one_path(i, j, k, {2, 2, 0}).phi), 0.0, kTolerance);
  EXPECT_NEAR(value(one_path(i, j, k, {2, -1, 0}).phi), kPi, kTolerance);
  EXPECT_NEAR(value(one_path(i, j, k, {0.2, -3, 0}).phi), kPi, kTolerance);
}

TEST(GeometricFeatures, PlusAndMinusNinetyDegreeDihedrals) {
  // b = (1, 0, 0), c = (0, 1, 0): n1 = z. p - j = +z gives n2 = b x z = -y and n1 x n2 = +x (along
  // b): +90 degrees; p - j = -z gives n2 = +y, n1 x n2 = -x: -90 degrees, mapped to 270.
  const Point i{0, 0, 0};
  const Point j{1, 0, 0};
  const Point k{1, 1, 0};
  EXPECT_NEAR(value(one_path(i, j, k, {1, 0, 1}).phi), kPi / 2, kTolerance);
  EXPECT_NEAR(value(one_path(i, j, k, {1, 0, -1}).phi), 3 * kPi / 2, kTolerance);
  // 45 degrees out of the plane on either side.
  EXPECT_NEAR(value(one_path(i, j, k, {1, 1, 1}).phi), kPi / 4, kTolerance);
  EXPECT_NEAR(value(one_path(i, j, k, {1, 1, -1}).phi), 7 * kPi / 4, kTolerance);
}

TEST(GeometricFeatures, TwoDimensionalPositionsAreTheirPlaneAtZHeight) {
  const auto flat =
      torch::tensor({0.0F, 0.0F, 1.0F, 0.0F, 1.5F, 1.0F, 2.0F, -1.0F}).reshape({4, 2});
  const auto paths = torch::tensor({0, 1, 2, 3}, torch::kInt64).reshape({4, 1});
  const auto g = path_geometry(flat, paths);
  const auto lifted = one_path({0, 0, 0}, {1, 0, 0}, {1.5, 1, 0}, {2, -1, 0});
  EXPECT_NEAR(value(g.phi), kPi, kTolerance);
  EXPECT_NEAR(value(g.theta_ijk), value(lifted.theta_ijk), kTolerance);
  EXPECT_NEAR(value(g.d_jp), std::sqrt(2.0), kTolerance);
}

TEST(GeometricFeatures, ADegeneratePathIsAllZerosAndNoNaN) {
  const auto pos = torch::randn({3, 3});
  const auto paths = torch::tensor({2, 2, 2, 2, 0, 1, 1, 0}, torch::kInt64)
                         .reshape({2, 4})
                         .t()
                         .contiguous();  // v->v->v->v, and i->j->j->i (coincident k, p)
  const auto g = path_geometry(pos, paths);
  for (const auto& t : {g.d_ij, g.d_jk, g.d_jp, g.theta_ijk, g.theta_ijp, g.phi}) {
    EXPECT_FALSE(torch::isnan(t).any().item<bool>());
    EXPECT_EQ(t[0].item<float>(), 0.0F);
  }
  EXPECT_EQ(g.d_jk[1].item<float>(), 0.0F);
  EXPECT_EQ(g.phi[1].item<float>(), 0.0F);
}

Point sub(const Point& a, const Point& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
double dot3(const Point& a, const Point& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Point cross3(const Point& a, const Point& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
Point scaled(const Point& a, double s) { return {a[0] * s, a[1] * s, a[2] * s}; }

// The dihedral by another route: c and d projected onto the plane normal to b, and the angle
// from the first to the second about b, in [0, 2 pi).
double projected_dihedral(const Point& i, const Point& j, const Point& k, const Point& p) {
  const Point b = sub(j, i);
  const Point unit = scaled(b, 1.0 / std::sqrt(dot3(b, b)));
  const Point c = sub(k, j);
  const Point d = sub(p, j);
  const Point u = sub(c, scaled(unit, dot3(c, unit)));
  const Point w = sub(d, scaled(unit, dot3(d, unit)));
  const double angle = std::atan2(dot3(unit, cross3(u, w)), dot3(u, w));
  return angle < 0 ? angle + 2 * kPi : angle;
}

double bond_angle(const Point& a, const Point& b) {
  return std::acos(dot3(a, b) / std::sqrt(dot3(a, a) * dot3(b, b)));
}

TEST(GeometricFeatures, RandomPathsAgreeWithProjectionsInDoublePrecision) {
  torch::manual_seed(5);
  const std::int64_t n = 400;
  const auto pos = torch::randn({4 * n, 3}, torch::kDouble);
  const auto paths = torch::arange(4 * n, torch::kInt64).reshape({n, 4}).t().contiguous();
  const auto g = path_geometry(pos, paths);
  const auto a = pos.accessor<double, 2>();
  const auto point = [&a](std::int64_t r) { return Point{a[r][0], a[r][1], a[r][2]}; };
  for (std::int64_t q = 0; q < n; ++q) {
    const Point i = point(4 * q), j = point(4 * q + 1), k = point(4 * q + 2), p = point(4 * q + 3);
    const double expected = projected_dihedral(i, j, k, p);
    // Compare on the circle: 2 pi - tiny and 0 are the same rotation.
    const double gap = std::remainder(g.phi[q].item<double>() - expected, 2 * kPi);
    EXPECT_NEAR(gap, 0.0, 1e-9) << q;
    EXPECT_GE(g.phi[q].item<double>(), 0.0);
    EXPECT_LT(g.phi[q].item<double>(), 2 * kPi);
    EXPECT_NEAR(g.theta_ijk[q].item<double>(), bond_angle(sub(j, i), sub(k, j)), 1e-9) << q;
    EXPECT_NEAR(g.theta_ijp[q].item<double>(), bond_angle(sub(j, i), sub(p, j)), 1e-9) << q;
    EXPECT_NEAR(g.d_jp[q].item<double>(), std::sqrt(dot3(sub(p, j), sub(p, j))), 1e-12) << q;
  }
}

TEST(GeometricFeatures, ARotationAndATranslationChangeNothing) {
  torch::manual_seed(9);
  const auto pos = torch::randn({40, 3}, torch::kDouble);
  // Four distinct nodes per path, as every path but the degenerate ones has.
  std::vector<at::Tensor> columns;
  for (int q = 0; q < 300; ++q)
    columns.push_back(torch::randperm(40, torch::kInt64).slice(0, 0, 4));
  const auto paths = torch::stack(columns, 1);
  auto [q, r] = at::linalg_qr(torch::randn({3, 3}, torch::kDouble));
  if (at::linalg_det(q).item<double>() < 0) q = q * torch::tensor({-1.0, 1.0, 1.0}, torch::kDouble);
  const auto moved = pos.matmul(q.t()) + torch::tensor({3.0, -2.0, 0.5}, torch::kDouble);
  const auto before = path_geometry(pos, paths);
  const auto after = path_geometry(moved, paths);
  EXPECT_TRUE(torch::allclose(before.d_ij, after.d_ij, 1e-9, 1e-9));
  EXPECT_TRUE(torch::allclose(before.theta_ijp, after.theta_ijp, 1e-9, 1e-9));
  // A dihedral near 0 may land on either side of the cut at 2 pi: compare on the circle.
  const auto gap = torch::remainder(before.phi - after.phi + kPi, 2 * kPi) - kPi;
  EXPECT_LT(gap.abs().max().item<double>(), 1e-9);
  // A reflection turns the dihedral the other way: phi becomes 2 pi - phi.
  const auto mirrored = path_geometry(pos * torch::tensor({1.0, 1.0, -1.0}, torch::kDouble), paths);
  const auto turned = torch::remainder(before.phi + mirrored.phi + kPi, 2 * kPi) - kPi;
  EXPECT_LT(turned.abs().max().item<double>(), 1e-9);
}

TEST(GeometricFeatures, GaussianSmearingWorkedByHand) {
  // Centres 0, 1, 2, 3, 4 (width 1): x = 1 sits on centre 1.
  const GaussianBasis basis{0.0, 4.0, 5};
  const auto features = basis.expand(torch::tensor({1.0F, 2.5F}));
  ASSERT_EQ(features.sizes(), (at::IntArrayRef{2, 5}));
  const std::vector<double> at_one = {std::exp(-0.5), 1.0, std::exp(-0.5), std::exp(-2.0),
                                      std::exp(-4.5)};
  for (std::int64_t c = 0; c < 5; ++c) {
    EXPECT_NEAR(features[0][c].item<double>(), at_one[static_cast<std::size_t>(c)], 1e-6) << c;
    const double offset = 2.5 - static_cast<double>(c);
    EXPECT_NEAR(features[1][c].item<double>(), std::exp(-0.5 * offset * offset), 1e-6) << c;
  }
  // Width (stop - start) / (K - 1): angles over [0, pi] with 6 centres are pi / 5 apart.
  const auto angles = angle_basis().expand(torch::tensor({static_cast<float>(kPi / 5)}));
  EXPECT_EQ(angles.size(1), 6);
  EXPECT_NEAR(angles[0][1].item<double>(), 1.0, 1e-6);
  EXPECT_NEAR(angles[0][0].item<double>(), std::exp(-0.5), 1e-6);
  EXPECT_EQ(distance_basis(10.0).expand(torch::zeros({3})).sizes(), (at::IntArrayRef{3, 50}));
  EXPECT_EQ(dihedral_basis().expand(torch::zeros({1})).size(1), 12);
  EXPECT_NEAR(
      dihedral_basis().expand(torch::tensor({static_cast<float>(2 * kPi)}))[0][11].item<double>(),
      1.0, 1e-6);
  EXPECT_THROW(GaussianBasis({0.0, 1.0, 1}).expand(torch::zeros({1})), c10::Error);
  EXPECT_THROW(GaussianBasis({1.0, 1.0, 4}).expand(torch::zeros({1})), c10::Error);
}

}  // namespace
}  // namespace headroom::nn
