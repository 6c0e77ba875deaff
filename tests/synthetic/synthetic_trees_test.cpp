// Synthetic geometric trees (synthetic/synthetic_trees.hpp): a geometric store whose trees are
// trees (parents, edges), whose features agree with the positions, whose two classes grow
// measurably differently, and which is the same for the same options.
#include "headroom/synthetic/synthetic_trees.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <numbers>
#include <vector>

#include "headroom/store/graph_store.hpp"
#include "test_support.hpp"

namespace headroom::synthetic {
namespace {

namespace fs = std::filesystem;

SyntheticTreeOptions small(std::uint32_t dimensions = 3, std::uint64_t seed = 5) {
  SyntheticTreeOptions o;
  o.seed = seed;
  o.trees = 60;
  o.min_nodes = 20;
  o.max_nodes = 40;
  o.dimensions = dimensions;
  o.test_fraction = 0.25;
  return o;
}

using Point = std::array<double, 3>;

Point position(const store::GraphView& view, std::size_t node, std::size_t dims) {
  Point p{0, 0, 0};
  for (std::size_t d = 0; d < dims; ++d) p[d] = view.positions[node * dims + d];
  return p;
}

Point minus(const Point& a, const Point& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
double norm(const Point& a) { return std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }
double angle(const Point& a, const Point& b) {
  const double c = (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]) / (norm(a) * norm(b));
  return std::acos(std::clamp(c, -1.0, 1.0));
}

TEST(SyntheticTrees, EveryTreeIsATreeWhoseFeaturesAgreeWithItsPositions) {
  testing::TempDir dir;
  const auto summary = generate_synthetic_trees(dir / "trees", small());
  const auto store = store::GraphStore::open(dir / "trees", store::StoreVerification::kFull);
  ASSERT_EQ(store.num_graphs(), 60U);
  EXPECT_EQ(summary.test_trees, 15U);
  EXPECT_EQ(store.test_ids().size(), 15U);
  EXPECT_EQ(store.metadata().position_dimensions, 3U);
  EXPECT_EQ(store.metadata().node_feature_count, kTreeNodeFeatures);
  std::uint64_t nodes = 0;
  for (std::size_t g = 0; g < store.num_graphs(); ++g) {
    const auto view = store.graph(g);
    const std::size_t n = view.num_nodes();
    nodes += n;
    ASSERT_GE(n, 20U);
    ASSERT_LE(n, 40U);
    ASSERT_EQ(view.num_edges(), 2 * (n - 1)) << g;
    for (std::size_t v = 0; v < n; ++v) {
      const float* f = &view.node_features[v * kTreeNodeFeatures];
      const std::int32_t parent = view.parents[v];
      ASSERT_EQ(parent < 0, v == 0) << "graph " << g << " node " << v << ": the root is node 0";
      if (parent < 0) continue;
      const auto up = static_cast<std::size_t>(parent);
      // depth: one more than the parent's; segment length: the distance to the parent.
      EXPECT_EQ(f[5], view.node_features[up * kTreeNodeFeatures + 5] + 1.0F) << g << " " << v;
      EXPECT_NEAR(f[2], norm(minus(position(view, v, 3), position(view, up, 3))), 1e-4)
          << g << " " << v;
      EXPECT_GE(f[1], 0.0F);  // intensity in [0, 1]
      EXPECT_LE(f[1], 1.0F);
    }
  }
  EXPECT_EQ(summary.nodes, nodes);
  EXPECT_GT(summary.max_third_order_paths, summary.min_third_order_paths);
}

// Per class, measured from the positions alone: the angle between the two children of a
// branching, a child's segment over its parent's, and the bend of an extension.
struct Growth {
  double branch_angle = 0, decay = 0, bend = 0;
  int branchings = 0, segments = 0, extensions = 0;
};

TEST(SyntheticTrees, TheTwoClassesGrowMeasurablyDifferently) {
  testing::TempDir dir;
  SyntheticTreeOptions options = small(2, 11);
  options.trees = 200;
  generate_synthetic_trees(dir / "trees", options);
  const auto store = store::GraphStore::open(dir / "trees");
  std::array<Growth, 2> by_label;
  for (std::size_t g = 0; g < store.num_graphs(); ++g) {
    const auto view = store.graph(g);
    Growth& growth = by_label[view.label];
    std::map<std::int32_t, std::vector<std::size_t>> children;
    for (std::size_t v = 1; v < view.num_nodes(); ++v) children[view.parents[v]].push_back(v);
    for (const auto& [parent, kids] : children) {
      const auto p = static_cast<std::size_t>(parent);
      const Point at = position(view, p, 2);
      if (kids.size() == 2) {
        growth.branch_angle +=
            angle(minus(position(view, kids[0], 2), at), minus(position(view, kids[1], 2), at));
        ++growth.branchings;
      }
      if (parent == 0) continue;  // the root has no segment of its own
      const Point in = minus(at, position(view, static_cast<std::size_t>(view.parents[p]), 2));
      for (const std::size_t kid : kids) {
        const Point out = minus(position(view, kid, 2), at);
        growth.decay += norm(out) / norm(in);
        ++growth.segments;
        if (kids.size() == 1) {
          growth.bend += angle(in, out);
          ++growth.extensions;
        }
      }
    }
  }
  const Growth& regular = by_label[0];
  const Growth& irregular = by_label[1];
  ASSERT_GT(regular.branchings, 50);
  ASSERT_GT(irregular.branchings, 50);
  // Class ranges (radians, ratios): branching 50-80 vs 25-55 degrees, decay 0.88-0.98 vs
  // 0.75-0.90, bends up to 0.05-0.20 vs 0.15-0.45 (a mean bend is half the tree's maximum).
  EXPECT_NEAR(regular.branch_angle / regular.branchings, 65 * std::numbers::pi / 180, 0.1);
  EXPECT_NEAR(irregular.branch_angle / irregular.branchings, 40 * std::numbers::pi / 180, 0.1);
  EXPECT_NEAR(regular.decay / regular.segments, 0.93, 0.02);
  EXPECT_NEAR(irregular.decay / irregular.segments, 0.825, 0.02);
  EXPECT_NEAR(regular.bend / regular.extensions, 0.0625, 0.02);
  EXPECT_NEAR(irregular.bend / irregular.extensions, 0.15, 0.03);
}

std::map<std::string, std::string> array_checksums(const fs::path& path) {
  std::map<std::string, std::string> checksums;
  const auto store = store::GraphStore::open(path);
  for (const auto& [name, record] : store.metadata().arrays) checksums[name] = record.xxh3;
  return checksums;
}

TEST(SyntheticTrees, TheSameOptionsGiveTheSameStoreAndAnotherSeedAnother) {
  testing::TempDir dir;
  generate_synthetic_trees(dir / "a", small(3, 5));
  generate_synthetic_trees(dir / "b", small(3, 5));
  generate_synthetic_trees(dir / "c", small(3, 6));
  const auto a = array_checksums(dir / "a");
  EXPECT_EQ(a.size(), 19U);  // every array, the geometric ones included (no target)
  EXPECT_EQ(a, array_checksums(dir / "b"));
  EXPECT_NE(a.at("node_positions"), array_checksums(dir / "c").at("node_positions"));
}

TEST(SyntheticTrees, OptionsOutOfRangeAreRefusedBeforeAnythingIsWritten) {
  testing::TempDir dir;
  SyntheticTreeOptions flat = small();
  flat.dimensions = 4;
  EXPECT_THROW(generate_synthetic_trees(dir / "trees", flat), std::invalid_argument);
  SyntheticTreeOptions inverted = small();
  inverted.min_nodes = 50;
  EXPECT_THROW(generate_synthetic_trees(dir / "trees", inverted), std::invalid_argument);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

}  // namespace
}  // namespace headroom::synthetic
