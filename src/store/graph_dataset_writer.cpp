#include "headroom/store/graph_dataset_writer.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "headroom/graph/can_id_vocabulary.hpp"
#include "headroom/graph/window_graph.hpp"
#include "headroom/store/store_builder.hpp"

namespace headroom::store {
namespace {

// The store's two source "files": the training graphs and the test graphs.
constexpr std::array<const char*, 2> kSplitNames = {"train", "test"};
constexpr const char* kAttackType = "graphs";

void check_options(const GraphDatasetOptions& options) {
  if (options.node_features == 0)
    throw std::invalid_argument("a node needs at least one feature: feature 0, its identity");
  if (options.identity_classes == 0)
    throw std::invalid_argument("the node identity needs at least one class");
  if (!(options.validation_fraction >= 0.0 && options.validation_fraction < 1.0))
    throw std::invalid_argument(fmt::format("the validation fraction must be in [0, 1), not {}",
                                            options.validation_fraction));
}

bool all_finite(std::span<const float> values) {
  for (const float value : values)
    if (!std::isfinite(value)) return false;
  return true;
}

}  // namespace

struct GraphDatasetWriter::State {
  GraphDatasetOptions options;
  StoreBuilder builder;
  std::array<std::unique_ptr<GraphSegmentWriter>, 2> segments;
  std::array<std::uint32_t, 2> graphs_in{};
  std::uint64_t graphs = 0;
  graph::WindowGraph scratch;

  State(const std::filesystem::path& path, GraphDatasetOptions opts)
      : options(std::move(opts)), builder(path, options.overwrite) {
    for (std::size_t i = 0; i < segments.size(); ++i)
      segments[i] = builder.open_segment(i, SegmentKeys::kRawCanIds);
  }

  // The graph as the segment writer takes it, or an exception naming what is wrong.
  void convert(const DatasetGraph& graph) {
    const auto where = [&](const std::string& reason) {
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
  }
};

GraphDatasetWriter::GraphDatasetWriter(const std::filesystem::path& path,
                                       GraphDatasetOptions options) {
  check_options(options);
  state_ = std::make_unique<State>(path, std::move(options));
}

GraphDatasetWriter::~GraphDatasetWriter() = default;

void GraphDatasetWriter::append(const DatasetGraph& graph) {
  State& s = *state_;
  s.convert(graph);
  const auto split = static_cast<std::size_t>(graph.split == DatasetSplit::kTest);
  s.segments[split]->append(s.scratch, s.graphs_in[split]++);
  ++s.graphs;
}

std::uint64_t GraphDatasetWriter::graphs() const { return state_->graphs; }

void GraphDatasetWriter::commit() {
  State& s = *state_;
  if (s.graphs_in[0] == 0)
    throw std::invalid_argument("no training graph: a store needs graphs to train on");
  StoreMetadata metadata;
  metadata.created_by = s.options.created_by;
  metadata.node_features.identity = graph::NodeIdentity::kGiven;
  metadata.node_features.given_features = s.options.node_features;
  metadata.node_features.given_classes = s.options.identity_classes;
  metadata.node_feature_count = s.options.node_features;
  metadata.edge_feature_count = s.options.edge_features;
  metadata.validation_fraction = s.options.validation_fraction;
  metadata.validation_seed = s.options.seed;
  metadata.attack_types = {kAttackType};
  std::vector<SegmentSummary> segments;
  for (std::size_t i = 0; i < kSplitNames.size(); ++i) {
    metadata.splits.push_back({kSplitNames[i], kSplitNames[i]});
    SourceFileRecord file;
    file.path = kSplitNames[i];
    file.split = static_cast<std::uint32_t>(i);
    file.rows = s.graphs_in[i];
    metadata.files.push_back(file);
    segments.push_back(s.segments[i]->finish());
  }
  s.builder.commit(std::move(metadata), segments, graph::CanIdVocabulary{});
}

}  // namespace headroom::store
