// `headroom generate-trees`: synthetic geometric trees, the default data of the geometric task
// (SGMP and GT-SSL, issue 48), written straight into a geometric graph store
// (docs/store-format.md, "Geometric stores") with node positions, each node's parent and each
// tree's path counts.
//
// A tree grows from a root at the origin, segment by segment, breadth first: a tip either extends
// (one child, its direction bent by up to the tree's tortuosity) or branches (two children, the
// branching angle apart), each child's segment the parent's times the length decay. Two classes
// grow differently, with overlapping ranges, so that telling them apart takes the geometry:
//   label 0 ("regular"):   branching angle 50-80 degrees, length decay 0.88-0.98, bends up to
//                          0.05-0.20 rad;
//   label 1 ("irregular"): branching angle 25-55 degrees, length decay 0.75-0.90, bends up to
//                          0.15-0.45 rad.
// Node features, after feature 0 (the identity, 0 for every node): intensity (a colour-like value
// in [0, 1] that fades with depth), segment length (to the parent; 0 at the root), radius (1 at
// the root, shrinking by 2^(-1/3) at each branching, as Murray's law has vessels do), shape (the
// cosine of the bend from the parent's segment; 1 at the root) and depth (hops from the root).
//
// Deterministic: a pure function of the options, every draw from util::SplitMix64 (the same on
// every platform); positions pass through the C library's sin and cos, whose last bit may differ
// between platforms.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace headroom::synthetic {

inline constexpr std::uint32_t kTreeNodeFeatures = 6;  // identity, then the five above

struct SyntheticTreeOptions {
  std::uint64_t seed = 7;
  std::uint32_t trees = 1000;
  // Nodes per tree, drawn uniformly in [min_nodes, max_nodes] per tree (2 <= min <= max).
  std::uint32_t min_nodes = 32;
  std::uint32_t max_nodes = 96;
  std::uint32_t dimensions = 3;      // 2 or 3
  double test_fraction = 0.2;        // of the trees, spread evenly through them
  double validation_fraction = 0.2;  // of the training trees, drawn by the store (seeded)
  bool overwrite = false;            // replace a graph store (never anything else)
  std::string created_by;            // recorded in the store's manifest
};

struct SyntheticTreeSummary {
  std::uint64_t trees = 0;
  std::uint64_t test_trees = 0;
  std::uint64_t label_1_trees = 0;
  std::uint64_t nodes = 0;
  std::uint64_t edges = 0;  // directed: two per parent-child link
  // 3rd-order paths per tree (store/graph_paths.hpp), as the store's size index records them.
  std::uint64_t min_third_order_paths = 0;
  std::uint64_t max_third_order_paths = 0;
  std::uint64_t third_order_paths = 0;  // all trees together
};

// Writes the store at `store` atomically (nothing is left on failure). Throws
// std::invalid_argument for options out of range (naming the option), and what
// store::GraphDatasetWriter throws for the path (it exists and is not a replaceable store). Memory
// is one tree at a time; thread-safe for distinct stores.
SyntheticTreeSummary generate_synthetic_trees(const std::filesystem::path& store,
                                              const SyntheticTreeOptions& options);

}  // namespace headroom::synthetic
