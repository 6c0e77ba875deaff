#include "headroom/synthetic/synthetic_trees.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "headroom/store/graph_dataset_writer.hpp"
#include "headroom/store/graph_paths.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/util/split_mix.hpp"

namespace headroom::synthetic {
namespace {

using Vector = std::array<double, 3>;  // the third coordinate stays 0 in 2-D

constexpr double kDegree = std::numbers::pi / 180.0;
constexpr double kBranchProbability = 0.35;

double uniform(util::SplitMix64& random, double low, double high) {
  const double unit = static_cast<double>(random.next() >> 11) * 0x1.0p-53;  // [0, 1)
  return low + (high - low) * unit;
}

Vector add(const Vector& a, const Vector& b, double scale) {
  return {a[0] + scale * b[0], a[1] + scale * b[1], a[2] + scale * b[2]};
}

double dot(const Vector& a, const Vector& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

Vector normalised(const Vector& v) {
  const double length = std::sqrt(dot(v, v));
  return {v[0] / length, v[1] / length, v[2] / length};
}

// How one tree grows, drawn from its class's ranges.
struct Growth {
  double branch_angle;  // radians between the two children of a branching
  double decay;         // a child's segment length over its parent's
  double max_bend;      // radians an extension may bend
};

Growth draw_growth(util::SplitMix64& random, bool irregular) {
  if (irregular)
    return {uniform(random, 25, 55) * kDegree, uniform(random, 0.75, 0.90),
            uniform(random, 0.15, 0.45)};
  return {uniform(random, 50, 80) * kDegree, uniform(random, 0.88, 0.98),
          uniform(random, 0.05, 0.20)};
}

// `direction` turned by `angle` towards a unit vector perpendicular to it: in 2-D one of the
// plane's two (`sign`), in 3-D a random one.
Vector turned(const Vector& direction, double angle, double sign, std::uint32_t dimensions,
              util::SplitMix64& random) {
  Vector perpendicular = {-direction[1] * sign, direction[0] * sign, 0.0};
  if (dimensions == 3) {
    Vector any;
    do {  // a random vector not parallel to the direction, less its component along it
      any = {uniform(random, -1, 1), uniform(random, -1, 1), uniform(random, -1, 1)};
      perpendicular = add(any, direction, -dot(any, direction));
    } while (dot(perpendicular, perpendicular) < 1e-6);
    perpendicular = normalised(perpendicular);
  }
  return normalised(add(Vector{direction[0] * std::cos(angle), direction[1] * std::cos(angle),
                               direction[2] * std::cos(angle)},
                        perpendicular, std::sin(angle)));
}

// One tree's arrays, as the store writer takes them.
struct Tree {
  std::vector<float> features;   // nodes x kTreeNodeFeatures
  std::vector<float> positions;  // nodes x dimensions
  std::vector<std::int64_t> parents;
  std::vector<std::int64_t> edges;
};

struct Node {
  Vector position;
  Vector direction;  // of the segment that ends here
  double length;     // of that segment
  double radius;
  double bend_cosine;
  std::uint32_t depth;
  std::int64_t parent;
};

std::vector<Node> grow(util::SplitMix64& random, const Growth& growth, std::uint32_t nodes,
                       std::uint32_t dimensions) {
  std::vector<Node> tree = {{{0, 0, 0}, {0, 1, 0}, 1.0, 1.0, 1.0, 0, -1}};
  std::deque<std::size_t> tips = {0};
  const auto add_child = [&](std::size_t parent, const Vector& direction, double radius) {
    const Node& from = tree[parent];
    const double length = from.length * growth.decay * uniform(random, 0.9, 1.1);
    tree.push_back({add(from.position, direction, length), direction, length, radius,
                    dot(direction, from.direction), from.depth + 1,
                    static_cast<std::int64_t>(parent)});
    tips.push_back(tree.size() - 1);
  };
  while (tree.size() < nodes) {
    const std::size_t tip = tips.front();
    tips.pop_front();
    const Node node = tree[tip];
    if (tree.size() + 2 <= nodes && uniform(random, 0, 1) < kBranchProbability) {
      const double half = growth.branch_angle / 2;
      const double child_radius = node.radius * std::pow(2.0, -1.0 / 3.0);
      add_child(tip, turned(node.direction, half, 1.0, dimensions, random), child_radius);
      add_child(tip, turned(node.direction, half, -1.0, dimensions, random), child_radius);
    } else {
      const double bend = uniform(random, -growth.max_bend, growth.max_bend);
      add_child(tip, turned(node.direction, bend, 1.0, dimensions, random), node.radius);
    }
  }
  return tree;
}

Tree tree_arrays(const std::vector<Node>& nodes, std::uint32_t dimensions,
                 util::SplitMix64& random) {
  std::uint32_t max_depth = 1;
  for (const Node& node : nodes) max_depth = std::max(max_depth, node.depth);
  Tree tree;
  for (std::size_t v = 0; v < nodes.size(); ++v) {
    const Node& node = nodes[v];
    const double intensity = std::clamp(
        1.0 - 0.6 * node.depth / static_cast<double>(max_depth) + uniform(random, -0.1, 0.1), 0.0,
        1.0);
    const double length = node.parent < 0 ? 0.0 : node.length;
    tree.features.insert(tree.features.end(),
                         {0.0F, static_cast<float>(intensity), static_cast<float>(length),
                          static_cast<float>(node.radius), static_cast<float>(node.bend_cosine),
                          static_cast<float>(node.depth)});
    for (std::uint32_t d = 0; d < dimensions; ++d)
      tree.positions.push_back(static_cast<float>(node.position[d]));
    tree.parents.push_back(node.parent);
    if (node.parent >= 0) {
      const auto child = static_cast<std::int64_t>(v);
      tree.edges.insert(tree.edges.end(), {node.parent, child, child, node.parent});
    }
  }
  return tree;
}

void check_options(const SyntheticTreeOptions& o) {
  if (o.trees == 0) throw std::invalid_argument("--trees must be at least 1");
  if (o.min_nodes < 2 || o.min_nodes > o.max_nodes)
    throw std::invalid_argument(fmt::format(
        "--min-nodes {} and --max-nodes {}: a tree has 2 <= min-nodes <= max-nodes nodes",
        o.min_nodes, o.max_nodes));
  if (o.dimensions != 2 && o.dimensions != 3)
    throw std::invalid_argument(
        fmt::format("--dimensions {}: trees grow in 2 or 3 dimensions", o.dimensions));
  if (!(o.test_fraction >= 0.0 && o.test_fraction < 1.0))
    throw std::invalid_argument(
        fmt::format("--test-fraction {} is not in [0, 1)", o.test_fraction));
}

// Tree t is a test tree when the running count of test trees steps up there: round(f * trees)
// test trees, spread evenly.
bool is_test_tree(std::uint64_t t, double test_fraction) {
  return std::floor(static_cast<double>(t + 1) * test_fraction) >
         std::floor(static_cast<double>(t) * test_fraction);
}

}  // namespace

SyntheticTreeSummary generate_synthetic_trees(const std::filesystem::path& store,
                                              const SyntheticTreeOptions& options) {
  check_options(options);
  store::GraphDatasetWriter writer(store, {.node_features = kTreeNodeFeatures,
                                           .edge_features = 0,
                                           .identity_classes = 1,
                                           .validation_fraction = options.validation_fraction,
                                           .seed = options.seed,
                                           .overwrite = options.overwrite,
                                           .created_by = options.created_by,
                                           .position_dimensions = options.dimensions,
                                           .has_parents = true,
                                           .target_name = {},
                                           .target_unit = {}});
  SyntheticTreeSummary summary;
  summary.min_third_order_paths = UINT64_MAX;
  util::SplitMix64 random(options.seed);
  const std::uint64_t node_choices = options.max_nodes - options.min_nodes + 1;
  for (std::uint64_t t = 0; t < options.trees; ++t) {
    const bool irregular = (random.next() >> 63) != 0;
    const Growth growth = draw_growth(random, irregular);
    const auto nodes = static_cast<std::uint32_t>(options.min_nodes + random.below(node_choices));
    const Tree tree =
        tree_arrays(grow(random, growth, nodes, options.dimensions), options.dimensions, random);
    const bool test = is_test_tree(t, options.test_fraction);
    writer.append({tree.features,
                   tree.edges,
                   {},
                   static_cast<std::uint8_t>(irregular),
                   test ? store::DatasetSplit::kTest : store::DatasetSplit::kTrain},
                  {tree.positions, tree.parents, 0.0});
    ++summary.trees;
    summary.test_trees += test ? 1 : 0;
    summary.label_1_trees += irregular ? 1 : 0;
    summary.nodes += nodes;
    summary.edges += tree.edges.size() / 2;
  }
  writer.commit();
  // Read back from the size index: what a planner will see.
  const auto written = store::GraphStore::open(store);  // the mapping the spans view
  const auto paths = written.size_index().num_paths;
  for (std::size_t g = 0; g < summary.trees; ++g) {
    const std::uint64_t third = paths[g * store::kPathOrders + 2];
    summary.min_third_order_paths = std::min(summary.min_third_order_paths, third);
    summary.max_third_order_paths = std::max(summary.max_third_order_paths, third);
    summary.third_order_paths += third;
  }
  return summary;
}

}  // namespace headroom::synthetic
