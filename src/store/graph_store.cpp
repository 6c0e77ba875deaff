#include "headroom/store/graph_store.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "headroom/store/graph_values.hpp"
#include "headroom/store/store_arrays.hpp"
#include "headroom/store/store_error.hpp"
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

}  // namespace

GraphStore GraphStore::open(const std::filesystem::path& path, StoreVerification verification) {
  const std::string where = util::printable_path(path);
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    throw StoreError(fmt::format("{}: no graph store here (not a directory)", where));
  }
  const auto manifest_path = path / kManifestFileName;
  std::ifstream manifest_file(manifest_path, std::ios::binary);
  if (!manifest_file) {
    throw StoreError(
        fmt::format("{}: not a complete graph store (no {})", where, kManifestFileName));
  }
  std::stringstream text;
  text << manifest_file.rdbuf();

  GraphStore store;
  store.path_ = path;
  store.metadata_ = std::make_shared<const StoreMetadata>(parse_manifest(text.str(), where));
  store.manifest_bytes_ = text.str().size();
  const StoreMetadata& m = *store.metadata_;

  for (const arrays::ArraySpec& spec : arrays::kArraySpecs) {
    const std::string_view name = spec.name;
    const std::string_view dtype = spec.dtype;
    const auto it = m.arrays.find(std::string(name));
    if (it == m.arrays.end())
      throw StoreError(fmt::format("{}: manifest lists no array '{}'", where, name));
    const ArrayRecord& record = it->second;
    if (record.dtype != dtype) {
      throw StoreError(fmt::format("{}: array '{}' has dtype {}, expected {}", where, name,
                                   util::printable(record.dtype, util::kMaxQuotedNameBytes),
                                   dtype));
    }
    std::uint64_t elements = 1;
    for (auto d : record.shape) elements *= d;
    if (elements * spec.element_bytes != record.bytes) {
      throw StoreError(fmt::format("{}: array '{}' shape does not match its size", where, name));
    }
    std::shared_ptr<const util::MappedFile> mapped;
    try {
      mapped = util::MappedFile::open(path / record.file);
    } catch (const std::system_error& e) {
      throw StoreError(fmt::format("{}: {}", where, e.what()));
    }
    if (mapped->size() != record.bytes) {
      throw StoreError(fmt::format(
          "{}: array file '{}' has {} bytes, manifest says {} (truncated store?)", where,
          util::printable(record.file, util::kMaxQuotedNameBytes), mapped->size(), record.bytes));
    }
    if (!spec.graph_data &&
        util::checksum_hex(util::checksum_bytes(mapped->bytes())) != record.xxh3) {
      throw StoreError(fmt::format("{}: checksum mismatch in '{}' (the store is corrupt)", where,
                                   util::printable(record.file, util::kMaxQuotedNameBytes)));
    }
    store.arrays_.emplace(std::string(name), std::move(mapped));
  }

  const std::uint64_t g = m.num_graphs;
  auto expect_rows = [&](std::string_view name, std::uint64_t rows) {
    if (m.arrays.at(std::string(name)).shape.at(0) != rows) {
      throw StoreError(fmt::format("{}: array '{}' has {} rows, expected {}", where, name,
                                   m.arrays.at(std::string(name)).shape.at(0), rows));
    }
  };
  for (auto name :
       {arrays::kGraphNumNodes, arrays::kGraphNumEdges, arrays::kGraphLabel, arrays::kGraphSplit,
        arrays::kGraphFile, arrays::kGraphAttackType, arrays::kGraphWindow}) {
    expect_rows(name, g);
  }
  expect_rows(arrays::kNodeOffsets, g + 1);
  expect_rows(arrays::kEdgeOffsets, g + 1);
  expect_rows(arrays::kNodeFeatures, m.num_nodes);
  expect_rows(arrays::kNodeCanIds, m.num_nodes);
  expect_rows(arrays::kEdgeIndex, m.num_edges);
  expect_rows(arrays::kEdgeFeatures, m.num_edges);

  store.node_offsets_ = store.typed<std::int64_t>(arrays::kNodeOffsets);
  store.edge_offsets_ = store.typed<std::int64_t>(arrays::kEdgeOffsets);
  store.all_.node_features = store.typed<float>(arrays::kNodeFeatures);
  store.all_.node_can_ids = store.typed<std::uint32_t>(arrays::kNodeCanIds);
  store.all_.edge_index = store.typed<std::int32_t>(arrays::kEdgeIndex);
  store.all_.edge_features = store.typed<float>(arrays::kEdgeFeatures);
  store.labels_ = store.typed<std::uint8_t>(arrays::kGraphLabel);
  check_size_index(store, where);

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
  return {
      typed<std::uint32_t>(arrays::kGraphNumNodes), typed<std::uint32_t>(arrays::kGraphNumEdges),
      typed<std::uint8_t>(arrays::kGraphLabel),     typed<std::uint16_t>(arrays::kGraphSplit),
      typed<std::uint32_t>(arrays::kGraphFile),     typed<std::uint16_t>(arrays::kGraphAttackType),
      typed<std::uint32_t>(arrays::kGraphWindow)};
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
