// Writes a graph-classification dataset that is not CAN traffic (graphs given as arrays, e.g. from
// Python: headroom.write_store) into a graph store, so that the planner, the byte packer and the
// training commands work on it as on CAN windows. The store is the same format
// (docs/store-format.md) with node identity "given": feature 0 of every node is a class index the
// dataset gives (an atom type, a node label; 0 for every node when it has none), and the node and
// edge feature widths are the dataset's.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

namespace headroom::store {

struct GraphDatasetOptions {
  std::uint32_t node_features = 1;     // per node, feature 0 (the identity) included; >= 1
  std::uint32_t edge_features = 0;     // per edge; may be 0
  std::uint32_t identity_classes = 1;  // feature 0 takes the values 0 .. identity_classes - 1
  double validation_fraction = 0.2;    // of the training graphs, drawn at random (seeded)
  std::uint64_t seed = 0;
  bool overwrite = false;  // replace a graph store (never anything else: store_builder.hpp)
  std::string created_by;  // recorded in the manifest, e.g. "headroom.write_store (Python)"
  // A geometric store (docs/store-format.md, "Geometric stores"): 2 or 3 coordinates per node,
  // and each graph's path counts in the size index; 0: no positions.
  std::uint32_t position_dimensions = 0;
  bool has_parents = false;   // every graph gives each node's parent (a tree); needs positions
  std::string target_name{};  // non-empty: every graph gives a float target (regression)
  std::string target_unit{};
};

// kValidation: a validation graph the dataset names (QM9's fixed split); a store holding any takes
// its validation split from them, not from the seeded validation_fraction draw.
enum class DatasetSplit { kTrain, kTest, kValidation };

// One graph as the writer takes it: row-major arrays, viewed (copied when appended).
struct DatasetGraph {
  std::span<const float> node_features;  // nodes x options.node_features
  std::span<const std::int64_t> edges;   // edges x 2 (source, target), local node indices
  std::span<const float> edge_features;  // edges x options.edge_features
  std::uint8_t label = 0;                // 0 or 1
  DatasetSplit split = DatasetSplit::kTrain;
};

// What a geometric store holds of a graph besides DatasetGraph (viewed, copied when appended).
struct GraphGeometry {
  std::span<const float> positions{};       // nodes x options.position_dimensions
  std::span<const std::int64_t> parents{};  // nodes: a local index or -1 (options.has_parents only)
  double target = 0.0;                      // read only when options.target_name is set
};

// Streams graphs into a staging directory beside `path` and renames it into place on commit(), so
// a killed writer leaves nothing that opens (store_builder.hpp). The store holds the training
// graphs first, then the given validation graphs, then the test graphs, each in append order.
// Not thread-safe.
class GraphDatasetWriter {
 public:
  // Throws std::invalid_argument for options out of range, and what StoreBuilder throws (`path`
  // exists and is not a store that may be replaced; another process is writing it).
  GraphDatasetWriter(const std::filesystem::path& path, GraphDatasetOptions options);
  ~GraphDatasetWriter();  // an uncommitted store is removed
  GraphDatasetWriter(const GraphDatasetWriter&) = delete;
  GraphDatasetWriter& operator=(const GraphDatasetWriter&) = delete;

  // Throws std::invalid_argument naming the graph (its number in append order) and the reason:
  // array sizes that disagree with the options or each other, no nodes, an edge outside the
  // graph's nodes, a feature that is not finite, an identity that is not a whole number below
  // identity_classes, a label other than 0 or 1; in a geometric store, positions that are missing
  // or not finite, parents that leave the graph or go round a cycle (node_parents.hpp), path counts
  // (graph_paths.hpp) past the store's uint32 counter; a target that is not finite. Nothing of a
  // refused graph is written.
  void append(const DatasetGraph& graph, const GraphGeometry& geometry = {});
  std::uint64_t graphs() const;

  // Writes the store's arrays, size index, splits and manifest, then renames it into place.
  // Throws std::invalid_argument when no training graph was appended.
  void commit();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace headroom::store
