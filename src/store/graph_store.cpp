#include "headroom/store/graph_store.hpp"

#include <fmt/format.h>

#include <fmt/ranges.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <vector>

#include "headroom/graph/window_graph.hpp"

#include "array_files.hpp"
#include "headroom/store/graph_paths.hpp"
#include "headroom/store/graph_values.hpp"
#include "headroom/store/store_arrays.hpp"
#include "headroom/store/store_error.hpp"
#include "headroom/util/file_reader.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::store {
namespace {

template <typename T>
std::span<const T> values_of(const GraphStore& store, std::string_view name) {
  const auto bytes = store.array(name)->bytes();
  return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
}

// Offsets of one kind (node or edge): graph g owns rows [offsets[g], offsets[g+1]), which must
// start at 0, never go back, end at the array's row count and agree with the size index.
void check_offsets(const std::string& where, std::string_view name,
                   std::span<const std::int64_t> offsets, std::span<const std::uint32_t> sizes,
                   std::string_view sizes_name, std::uint64_t rows) {
  if (offsets.front() != 0) {
    throw StoreError(
        fmt::format("{}: array '{}' of graph 0: starts at {}, not 0 (the store is "
                    "corrupt)",
                    where, name, offsets.front()));
  }
  for (std::size_t g = 0; g < sizes.size(); ++g) {
    if (offsets[g + 1] < offsets[g] || offsets[g + 1] - offsets[g] != sizes[g]) {
      throw StoreError(fmt::format(
          "{}: array '{}' of graph {}: rows [{}, {}) disagree with '{}' ({}) (the store is "
          "corrupt)",
          where, name, g, offsets[g], offsets[g + 1], sizes_name, sizes[g]));
    }
  }
  if (static_cast<std::uint64_t>(offsets.back()) != rows) {
    throw StoreError(
        fmt::format("{}: array '{}' ends at row {}, the graph data has {} rows (the "
                    "store is corrupt)",
                    where, name, offsets.back(), rows));
  }
}

// Per-graph indices into the manifest's tables, and the split lists into the graphs.
template <typename T>
void check_below(const std::string& where, std::string_view name, std::span<const T> values,
                 std::uint64_t limit, std::string_view what) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] >= limit) {
      throw StoreError(
          fmt::format("{}: array '{}' row {}: {} is not below {} ({}) (the store is "
                      "corrupt)",
                      where, name, i, values[i], limit, what));
    }
  }
}

// The size index, offsets and split lists: small arrays (a few bytes per graph), so checking
// every value costs next to nothing and keeps graph() from ever reading outside the data arrays.
void check_size_index(const GraphStore& store, const std::string& where) {
  const StoreMetadata& m = store.metadata();
  const GraphSizeIndex index = store.size_index();
  check_offsets(where, arrays::kNodeOffsets, values_of<std::int64_t>(store, arrays::kNodeOffsets),
                index.num_nodes, arrays::kGraphNumNodes, m.num_nodes);
  check_offsets(where, arrays::kEdgeOffsets, values_of<std::int64_t>(store, arrays::kEdgeOffsets),
                index.num_edges, arrays::kGraphNumEdges, m.num_edges);
  check_below(where, arrays::kGraphLabel, index.label, 2, "labels are 0 or 1");
  check_below(where, arrays::kGraphSplit, index.split, m.splits.size(), "the manifest's splits");
  check_below(where, arrays::kGraphFile, index.file, m.files.size(), "the manifest's files");
  check_below(where, arrays::kGraphAttackType, index.attack_type, m.attack_types.size(),
              "the manifest's attack types");
  for (const auto name : {arrays::kSplitTrain, arrays::kSplitValidation, arrays::kSplitTest}) {
    check_below(where, name, values_of<std::uint32_t>(store, name), m.num_graphs,
                "the store's graph count");
  }
}

// The manifest's own counts, before they size anything: feature widths the arrays can hold and the
// per-file indices into its own tables (inspect prints them).
void check_counts(const StoreMetadata& m, const std::string& where) {
  if (m.node_feature_count == 0) {
    throw StoreError(
        fmt::format("{}: node_feature_count is 0; feature 0 is the CAN-ID index (the "
                    "store is corrupt)",
                    where));
  }
  if (m.node_feature_count != m.node_features.count()) {
    throw StoreError(fmt::format(
        "{}: node_feature_count is {}, but the feature groups it records have {} (the store is "
        "corrupt)",
        where, m.node_feature_count, m.node_features.count()));
  }
  // Graph ids are uint32 in the split lists, and num_graphs + 1 offsets must be countable.
  if (m.num_graphs > std::numeric_limits<std::uint32_t>::max()) {
    throw StoreError(
        fmt::format("{}: num_graphs is {}, more than graph ids can number (the store "
                    "is corrupt)",
                    where, m.num_graphs));
  }
  const bool given = m.node_features.identity == graph::NodeIdentity::kGiven;
  if (given && m.node_features.given_classes == 0) {
    throw StoreError(
        fmt::format("{}: the dataset's node identity has 0 classes (the store is corrupt)", where));
  }
  // A dataset written from outside has its own edge features; CAN window graphs have KD-GAT's.
  if (!given && m.edge_feature_count != graph::kEdgeFeatureCount) {
    throw StoreError(
        fmt::format("{}: edge_feature_count is {}; graph stores have {} edge features (the store "
                    "is corrupt)",
                    where, m.edge_feature_count, graph::kEdgeFeatureCount));
  }
  for (std::size_t i = 0; i < m.files.size(); ++i) {
    const SourceFileRecord& file = m.files[i];
    if (file.split >= m.splits.size() || file.attack_type >= m.attack_types.size()) {
      throw StoreError(fmt::format(
          "{}: manifest file {} ('{}') has split {} and attack type {}, outside the manifest's {} "
          "splits and {} attack types (the store is corrupt)",
          where, i, util::printable(file.path, util::kMaxQuotedNameBytes), file.split,
          file.attack_type, m.splits.size(), m.attack_types.size()));
    }
  }
}

// The shape the manifest's counts give an array: its rows (nullopt: any, for the index lists) and
// its columns (empty: one-dimensional).
struct ExpectedShape {
  std::optional<std::uint64_t> rows;
  std::optional<std::uint64_t> columns;
};

ExpectedShape expected_shape(const StoreMetadata& m, std::string_view name) {
  namespace a = arrays;
  if (name == a::kNodeFeatures) return {m.num_nodes, m.node_feature_count};
  if (name == a::kNodeCanIds) return {m.num_nodes, std::nullopt};
  if (name == a::kEdgeIndex) return {m.num_edges, 2};
  if (name == a::kEdgeFeatures) return {m.num_edges, m.edge_feature_count};
  if (name == a::kNodeOffsets || name == a::kEdgeOffsets) return {m.num_graphs + 1, std::nullopt};
  if (name == a::kSplitTrain || name == a::kSplitValidation || name == a::kSplitTest)
    return {std::nullopt, std::nullopt};
  if (name == a::kNodePositions) return {m.num_nodes, m.position_dimensions};
  if (name == a::kNodeParent) return {m.num_nodes, std::nullopt};
  if (name == a::kGraphNumPaths) return {m.num_graphs, kPathOrders};
  return {m.num_graphs, std::nullopt};  // the size index: one row per graph
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// Dtype, file name and shape of one array record against the spec and the manifest's counts, and
// its byte count against its shape (without overflow). Reads nothing.
void check_array_record(const StoreMetadata& m, const arrays::ArraySpec& spec,
                        const ArrayRecord& record, const std::string& where) {
  const std::string_view name = spec.name;
  if (record.dtype != spec.dtype) {
    throw StoreError(fmt::format("{}: array '{}' has dtype {}, expected {}", where, name,
                                 util::printable(record.dtype, util::kMaxQuotedNameBytes),
                                 spec.dtype));
  }
  check_file_name(record.file, name, where);
  const ExpectedShape expected = expected_shape(m, name);
  const std::size_t rank = expected.columns ? 2 : 1;
  const auto& shape = record.shape;
  if (shape.size() != rank || (expected.rows && shape[0] != *expected.rows) ||
      (expected.columns && shape[1] != *expected.columns)) {
    std::vector<std::string> wanted{expected.rows ? std::to_string(*expected.rows) : "any"};
    if (expected.columns) wanted.push_back(std::to_string(*expected.columns));
    throw StoreError(fmt::format(
        "{}: array '{}' has shape {}, the manifest's counts give [{}] (the store is corrupt)",
        where, name, shape_text(shape), fmt::join(wanted, ", ")));
  }
  std::uint64_t bytes = spec.element_bytes;
  for (const std::uint64_t d : shape) {
    if (__builtin_mul_overflow(bytes, d, &bytes)) {
      throw StoreError(
          fmt::format("{}: array '{}' shape {} is larger than any file (the store is "
                      "corrupt)",
                      where, name, shape_text(shape)));
    }
  }
  if (bytes != record.bytes) {
    throw StoreError(fmt::format("{}: array '{}' shape {} does not match its size ({} bytes)",
                                 where, name, shape_text(shape), record.bytes));
  }
}

// Whether the manifest's fields ask for an optional array (a geometric store's): a store lists
// exactly the arrays its fields ask for, so an old reader's stores and a geometric one's never mix.
bool array_expected(const StoreMetadata& m, const arrays::ArraySpec& spec) {
  namespace a = arrays;
  if (!spec.optional) return true;
  if (spec.name == a::kNodePositions || spec.name == a::kGraphNumPaths)
    return m.position_dimensions > 0;
  if (spec.name == a::kNodeParent) return m.has_parents;
  if (spec.name == a::kGraphTarget) return !m.target_name.empty();
  return false;
}

// The arrays of the manifest's table, each of which must be one its fields ask for.
void check_array_table(const StoreMetadata& m, const std::string& where) {
  for (const arrays::ArraySpec& spec : arrays::kArraySpecs) {
    const bool listed = m.arrays.count(std::string(spec.name)) != 0;
    if (!listed && array_expected(m, spec))
      throw StoreError(fmt::format("{}: manifest lists no array '{}'", where, spec.name));
    if (listed && !array_expected(m, spec))
      throw StoreError(fmt::format(
          "{}: manifest lists array '{}', which its fields (geometry, graph_target) do not ask for "
          "(the store is corrupt)",
          where, spec.name));
    if (listed) check_array_record(m, spec, m.arrays.at(std::string(spec.name)), where);
  }
}

// A geometric store's small arrays: targets finite (a regression loss would be NaN otherwise).
void check_targets(const GraphStore& store, const std::string& where) {
  const auto targets = store.size_index().target;
  for (std::size_t g = 0; g < targets.size(); ++g)
    if (!std::isfinite(targets[g]))
      throw StoreError(
          fmt::format("{}: array '{}' row {}: {} is not a finite target (the store is corrupt)",
                      where, arrays::kGraphTarget, g, targets[g]));
}

}  // namespace

GraphStore GraphStore::open(const std::filesystem::path& path, StoreVerification verification,
                            util::MappingAccess access) {
  const std::string where = util::printable_path(path);
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    throw StoreError(fmt::format("{}: no graph store here (not a directory)", where));
  }
  const auto manifest_path = path / kManifestFileName;
  // A FIFO or a device would block or never end the read; the writer only writes plain files.
  if (std::filesystem::exists(manifest_path, ec) &&
      !std::filesystem::is_regular_file(manifest_path, ec)) {
    throw StoreError(fmt::format("{}: {} is not a regular file", where, kManifestFileName));
  }
  // Opened without blocking and bounded: the check above cannot stop a FIFO put there since.
  std::optional<std::string> manifest_text;
  try {
    manifest_text = util::read_file_if_present(manifest_path);
  } catch (const std::exception& e) {
    throw StoreError(fmt::format("{}: {}", where, e.what()));
  }
  if (!manifest_text) {
    throw StoreError(
        fmt::format("{}: not a complete graph store (no {})", where, kManifestFileName));
  }
  std::stringstream text(std::move(*manifest_text));

  GraphStore store;
  store.path_ = path;
  store.metadata_ = std::make_shared<const StoreMetadata>(parse_manifest(text.str(), where));
  store.manifest_bytes_ = text.str().size();
  const StoreMetadata& m = *store.metadata_;

  // Every record is checked against the counts before any file is opened, so that no count, shape
  // or name a manifest holds can make a later read leave an array or the store.
  check_array_table(m, where);
  check_counts(m, where);
  const auto directory = canonical_directory(path, where);
  for (const arrays::ArraySpec& spec : arrays::kArraySpecs) {
    if (!array_expected(m, spec)) continue;
    const ArrayRecord& record = m.arrays.at(std::string(spec.name));
    auto mapped = map_array_file(directory, spec.name, record, where, access);
    if (!spec.graph_data &&
        util::checksum_hex(util::checksum_bytes(mapped->bytes())) != record.xxh3) {
      throw StoreError(fmt::format("{}: checksum mismatch in '{}' (the store is corrupt)", where,
                                   util::printable(record.file, util::kMaxQuotedNameBytes)));
    }
    store.arrays_.emplace(std::string(spec.name), std::move(mapped));
  }

  store.node_offsets_ = store.typed<std::int64_t>(arrays::kNodeOffsets);
  store.edge_offsets_ = store.typed<std::int64_t>(arrays::kEdgeOffsets);
  store.all_.node_features = store.typed<float>(arrays::kNodeFeatures);
  store.all_.node_can_ids = store.typed<std::uint32_t>(arrays::kNodeCanIds);
  store.all_.edge_index = store.typed<std::int32_t>(arrays::kEdgeIndex);
  store.all_.edge_features = store.typed<float>(arrays::kEdgeFeatures);
  store.labels_ = store.typed<std::uint8_t>(arrays::kGraphLabel);
  if (m.position_dimensions > 0) store.all_.positions = store.typed<float>(arrays::kNodePositions);
  if (m.has_parents) store.all_.parents = store.typed<std::int32_t>(arrays::kNodeParent);
  check_size_index(store, where);
  check_targets(store, where);

  if (verification == StoreVerification::kFull) store.verify_all();
  return store;
}

template <typename T>
std::span<const T> GraphStore::typed(std::string_view name) const {
  const auto it = arrays_.find(name);
  if (it == arrays_.end())
    throw StoreError(fmt::format("{}: no array '{}'", util::printable_path(path_), name));
  const auto bytes = it->second->bytes();
  return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
}

GraphSizeIndex GraphStore::size_index() const {
  GraphSizeIndex index{typed<std::uint32_t>(arrays::kGraphNumNodes),
                       typed<std::uint32_t>(arrays::kGraphNumEdges),
                       typed<std::uint8_t>(arrays::kGraphLabel),
                       typed<std::uint16_t>(arrays::kGraphSplit),
                       typed<std::uint32_t>(arrays::kGraphFile),
                       typed<std::uint16_t>(arrays::kGraphAttackType),
                       typed<std::uint32_t>(arrays::kGraphWindow),
                       {},
                       {}};
  if (metadata_->position_dimensions > 0)
    index.num_paths = typed<std::uint32_t>(arrays::kGraphNumPaths);
  if (!metadata_->target_name.empty()) index.target = typed<double>(arrays::kGraphTarget);
  return index;
}

GraphView GraphStore::graph(std::size_t graph_id) const {
  if (graph_id >= num_graphs()) {
    throw std::out_of_range(
        fmt::format("graph {} out of range (store has {})", graph_id, num_graphs()));
  }
  const auto n0 = static_cast<std::size_t>(node_offsets_[graph_id]);
  const auto n1 = static_cast<std::size_t>(node_offsets_[graph_id + 1]);
  const auto e0 = static_cast<std::size_t>(edge_offsets_[graph_id]);
  const auto e1 = static_cast<std::size_t>(edge_offsets_[graph_id + 1]);
  const std::size_t nf = metadata_->node_feature_count;
  const std::size_t ef = metadata_->edge_feature_count;
  GraphView view;
  view.node_features = all_.node_features.subspan(n0 * nf, (n1 - n0) * nf);
  view.node_can_ids = all_.node_can_ids.subspan(n0, n1 - n0);
  view.edge_index = all_.edge_index.subspan(e0 * 2, (e1 - e0) * 2);
  view.edge_features = all_.edge_features.subspan(e0 * ef, (e1 - e0) * ef);
  view.label = labels_[graph_id];
  const std::size_t dims = metadata_->position_dimensions;
  if (dims > 0) view.positions = all_.positions.subspan(n0 * dims, (n1 - n0) * dims);
  if (metadata_->has_parents) view.parents = all_.parents.subspan(n0, n1 - n0);
  return view;
}

std::span<const std::uint32_t> GraphStore::train_ids() const {
  return typed<std::uint32_t>(arrays::kSplitTrain);
}
std::span<const std::uint32_t> GraphStore::validation_ids() const {
  return typed<std::uint32_t>(arrays::kSplitValidation);
}
std::span<const std::uint32_t> GraphStore::test_ids() const {
  return typed<std::uint32_t>(arrays::kSplitTest);
}

void GraphStore::verify_all() const {
  for (const auto& [name, mapped] : arrays_) {
    const ArrayRecord& record = metadata_->arrays.at(name);
    // Read through the file, not the mapping, so verification does not grow this process's RSS.
    if (util::checksum_hex(util::checksum_file(mapped->path())) != record.xxh3) {
      throw StoreError(fmt::format("{}: checksum mismatch in '{}' (the store is corrupt)",
                                   util::printable_path(path_),
                                   util::printable(record.file, util::kMaxQuotedNameBytes)));
    }
  }
  // Right checksums prove only that the files are the ones their writer wrote.
  for (std::size_t g = 0; g < num_graphs(); ++g) check_graph_values(*this, g, graph(g));
}

const std::shared_ptr<const util::MappedFile>& GraphStore::array(std::string_view name) const {
  const auto it = arrays_.find(name);
  if (it == arrays_.end())
    throw StoreError(fmt::format("{}: no array '{}'", util::printable_path(path_), name));
  return it->second;
}

std::uint64_t GraphStore::bytes_on_disk() const {
  std::uint64_t total = manifest_bytes_;
  for (const auto& [name, mapped] : arrays_) total += mapped->size();
  return total;
}

}  // namespace headroom::store
