#include "headroom/store/graph_dataset_writer.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

#include "geometry_arrays.hpp"
#include "headroom/graph/can_id_vocabulary.hpp"
#include "headroom/graph/window_graph.hpp"
#include "headroom/store/graph_paths.hpp"
#include "headroom/store/node_parents.hpp"
#include "headroom/store/store_builder.hpp"

namespace headroom::store {
namespace {

// The store's source "files", one per split, in store order: the training graphs, the given
// validation graphs (a file only when there are any) and the test graphs.
struct SplitGroup {
  const char* name;
  const char* role;
};
constexpr std::array<SplitGroup, 3> kSplitGroups = {
    {{"train", "train"}, {kGivenValidationSplit, "train"}, {"test", "test"}}};
constexpr std::size_t kValidationGroup = 1;

std::size_t group_of(DatasetSplit split) {
  switch (split) {
    case DatasetSplit::kTrain:
      return 0;
    case DatasetSplit::kValidation:
      return kValidationGroup;
    case DatasetSplit::kTest:
      return 2;
  }
  throw std::invalid_argument("unknown split");
}
constexpr const char* kAttackType = "graphs";

void check_options(const GraphDatasetOptions& options) {
  if (options.node_features == 0)
    throw std::invalid_argument("a node needs at least one feature: feature 0, its identity");
  if (options.identity_classes == 0)
    throw std::invalid_argument("the node identity needs at least one class");
  if (options.position_dimensions != 0 && options.position_dimensions != 2 &&
      options.position_dimensions != 3)
    throw std::invalid_argument(
        fmt::format("positions have 2 or 3 dimensions, not {}", options.position_dimensions));
  if (options.has_parents && options.position_dimensions == 0)
    throw std::invalid_argument("a tree's parents are stored with its positions: give both");
  if (!(options.validation_fraction >= 0.0 && options.validation_fraction < 1.0))
    throw std::invalid_argument(fmt::format("the validation fraction must be in [0, 1), not {}",
                                            options.validation_fraction));
}

bool all_finite(std::span<const float> values) {
  for (const float value : values)
    if (!std::isfinite(value)) return false;
  return true;
}

// Path counts as the store's uint32 size index holds them. A graph past it would also be past any
// memory budget: 2^32 3rd-order paths are 128 GiB of int64 path indices alone.
std::array<std::uint32_t, kPathOrders> checked_path_counts(std::span<const std::int32_t> edges,
                                                           std::size_t nodes) {
  const PathCounts counts = count_paths(edges, static_cast<std::uint32_t>(nodes));
  const std::array<std::uint64_t, kPathOrders> wide = {counts.first, counts.second, counts.third};
  constexpr std::array<const char*, kPathOrders> kOrder = {"1st", "2nd", "3rd"};
  std::array<std::uint32_t, kPathOrders> narrow{};
  for (std::size_t order = 0; order < kPathOrders; ++order) {
    if (wide[order] > std::numeric_limits<std::uint32_t>::max())
      throw std::invalid_argument(fmt::format(
          "{} {}-order paths overflow the store's path counter (uint32, at most {}); a graph "
          "this dense is past any memory budget for a path-based encoder",
          wide[order], kOrder[order], std::numeric_limits<std::uint32_t>::max()));
    narrow[order] = static_cast<std::uint32_t>(wide[order]);
  }
  return narrow;
}

}  // namespace

struct GraphDatasetWriter::State {
  GraphDatasetOptions options;
  StoreBuilder builder;
  std::array<std::unique_ptr<GraphSegmentWriter>, kSplitGroups.size()> segments;
  std::array<std::uint32_t, kSplitGroups.size()> graphs_in{};
  std::uint64_t graphs = 0;
  std::uint64_t nodes_written = 0;
  graph::WindowGraph scratch;
  std::unique_ptr<detail::GeometryArrays> geometry_arrays;
  detail::GeometryRows geometry_rows;
  std::vector<std::int32_t> parents;

  State(const std::filesystem::path& path, GraphDatasetOptions opts)
      : options(std::move(opts)), builder(path, options.overwrite) {
    for (std::size_t i = 0; i < segments.size(); ++i)
      segments[i] = builder.open_segment(i, SegmentKeys::kRawCanIds);
    geometry_arrays = std::make_unique<detail::GeometryArrays>(
        builder.temporary_directory(), geometric_fields(), kSplitGroups.size());
  }

  // The manifest fields of a geometric store (or none of them).
  StoreMetadata geometric_fields() const {
    StoreMetadata fields;
    fields.position_dimensions = options.position_dimensions;
    fields.has_parents = options.has_parents;
    fields.target_name = options.target_name;
    fields.target_unit = options.target_unit;
    return fields;
  }

  // Positions, parents, paths and target of `graph` (whose edges `scratch` holds, checked) into
  // geometry_rows, or an exception naming what is wrong.
  void convert_geometry(const GraphGeometry& graph, std::size_t nodes,
                        const std::function<std::invalid_argument(const std::string&)>& where) {
    const std::size_t dims = options.position_dimensions;
    if (graph.positions.size() != nodes * dims)
      throw where(fmt::format("{} position values for {} nodes of {} dimensions",
                              graph.positions.size(), nodes, dims));
    if (!all_finite(graph.positions)) throw where("a position is not finite (NaN or infinite)");
    geometry_rows.positions = graph.positions;
    parents.clear();
    if (options.has_parents) {
      if (graph.parents.size() != nodes)
        throw where(fmt::format("{} parents for {} nodes", graph.parents.size(), nodes));
      if (const auto problem = find_parent_problem(graph.parents))
        throw where(fmt::format("node {}: {}", problem->node, problem->reason));
      parents.assign(graph.parents.begin(), graph.parents.end());  // in [-1, nodes): checked
    }
    geometry_rows.parents = parents;
    if (dims > 0) {
      try {
        geometry_rows.paths = checked_path_counts(scratch.edge_index, nodes);
      } catch (const std::invalid_argument& e) {
        throw where(e.what());
      }
    }
    if (!options.target_name.empty() && !std::isfinite(graph.target))
      throw where(fmt::format("target {} is not finite", graph.target));
    geometry_rows.target = graph.target;
  }

  // The graph as the segment writer takes it, or an exception naming what is wrong.
  void convert(const DatasetGraph& graph, const GraphGeometry& geometry) {
    const std::function<std::invalid_argument(const std::string&)> where =
        [&](const std::string& reason) {
          return std::invalid_argument(fmt::format("graph {}: {}", graphs, reason));
        };
    const std::size_t width = options.node_features;
    const std::size_t edge_width = options.edge_features;
    if (graph.node_features.empty() || graph.node_features.size() % width != 0)
      throw where(fmt::format("{} node feature values are not a positive multiple of {} features",
                              graph.node_features.size(), width));
    const std::size_t nodes = graph.node_features.size() / width;
    if (nodes > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
      throw where(fmt::format("{} nodes: more than a store's int32 edge indices reach", nodes));
    if (graph.edges.size() % 2 != 0)
      throw where(
          fmt::format("{} edge index values are not (source, target) pairs", graph.edges.size()));
    const std::size_t edges = graph.edges.size() / 2;
    if (graph.edge_features.size() != edges * edge_width)
      throw where(fmt::format("{} edge feature values for {} edges of {} features",
                              graph.edge_features.size(), edges, edge_width));
    if (graph.label > 1) throw where(fmt::format("label {}: labels are 0 or 1", graph.label));
    if (!all_finite(graph.node_features)) throw where("a node feature is not finite");
    if (!all_finite(graph.edge_features)) throw where("an edge feature is not finite");

    scratch.node_feature_count = width;
    scratch.node_features.assign(graph.node_features.begin(), graph.node_features.end());
    scratch.node_keys.resize(nodes);
    for (std::size_t node = 0; node < nodes; ++node) {
      const float identity = graph.node_features[node * width];
      if (!(identity >= 0.0F && identity == std::trunc(identity) &&
            identity < static_cast<float>(options.identity_classes)))
        throw where(
            fmt::format("node {} has identity {} (feature 0), not a whole number in "
                        "[0, {})",
                        node, identity, options.identity_classes));
      scratch.node_keys[node] = static_cast<std::uint32_t>(identity);
    }
    scratch.edge_index.resize(graph.edges.size());
    for (std::size_t k = 0; k < graph.edges.size(); ++k) {
      const std::int64_t index = graph.edges[k];
      if (index < 0 || static_cast<std::size_t>(index) >= nodes)
        throw where(fmt::format("edge {} has {} node {}, outside the graph's {} nodes", k / 2,
                                k % 2 == 0 ? "source" : "target", index, nodes));
      scratch.edge_index[k] = static_cast<std::int32_t>(index);
    }
    scratch.edge_features.assign(graph.edge_features.begin(), graph.edge_features.end());
    scratch.label = graph.label;
    convert_geometry(geometry, nodes, where);
  }
};

GraphDatasetWriter::GraphDatasetWriter(const std::filesystem::path& path,
                                       GraphDatasetOptions options) {
  check_options(options);
  state_ = std::make_unique<State>(path, std::move(options));
}

GraphDatasetWriter::~GraphDatasetWriter() = default;

void GraphDatasetWriter::append(const DatasetGraph& graph, const GraphGeometry& geometry) {
  State& s = *state_;
  s.convert(graph, geometry);
  const std::size_t group = group_of(graph.split);
  s.segments[group]->append(s.scratch, s.graphs_in[group]++);
  s.geometry_arrays->append(group, s.geometry_rows);
  ++s.graphs;
  s.nodes_written += s.scratch.num_nodes();
}

std::uint64_t GraphDatasetWriter::graphs() const { return state_->graphs; }

void GraphDatasetWriter::commit() {
  State& s = *state_;
  if (s.graphs_in[0] == 0)
    throw std::invalid_argument("no training graph: a store needs graphs to train on");
  StoreMetadata metadata = s.geometric_fields();
  metadata.arrays = s.geometry_arrays->finish(s.graphs, s.nodes_written);
  metadata.created_by = s.options.created_by;
  metadata.node_features.identity = graph::NodeIdentity::kGiven;
  metadata.node_features.given_features = s.options.node_features;
  metadata.node_features.given_classes = s.options.identity_classes;
  metadata.node_feature_count = s.options.node_features;
  metadata.edge_feature_count = s.options.edge_features;
  metadata.validation_fraction = s.options.validation_fraction;
  metadata.validation_seed = s.options.seed;
  metadata.attack_types = {kAttackType};
  // Given validation graphs replace the seeded draw (StoreMetadata::validation_by).
  if (s.graphs_in[kValidationGroup] > 0) metadata.validation_by = kGivenValidation;
  std::vector<SegmentSummary> segments;
  for (std::size_t i = 0; i < kSplitGroups.size(); ++i) {
    SegmentSummary segment = s.segments[i]->finish();
    if (i == kValidationGroup && s.graphs_in[i] == 0) {
      s.builder.discard_segment(segment);  // no file: the store is as it was without the option
      continue;
    }
    SourceFileRecord file;
    file.path = kSplitGroups[i].name;
    file.split = static_cast<std::uint32_t>(metadata.splits.size());
    file.rows = s.graphs_in[i];
    metadata.splits.push_back({kSplitGroups[i].name, kSplitGroups[i].role});
    metadata.files.push_back(file);
    segments.push_back(std::move(segment));
  }
  s.builder.commit(std::move(metadata), segments, graph::CanIdVocabulary{});
}

}  // namespace headroom::store
