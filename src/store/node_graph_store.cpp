#include "headroom/store/node_graph_store.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "array_files.hpp"
#include "headroom/store/store_error.hpp"
#include "headroom/util/file_reader.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::store {
namespace {

namespace a = node_graph_arrays;

std::uint64_t expected_rows(const NodeGraphMetadata& m, std::string_view name) {
  if (name == a::kRowOffsets) return m.num_nodes + 1;
  if (name == a::kColumnIndex || name == a::kEdgeWeight) return m.num_edges;
  return m.num_nodes;
}

// Row offsets start at 0, never go back and end at the edge count: every row's slice lies inside
// the edge arrays.
void check_row_offsets(std::span<const std::int64_t> offsets, std::uint64_t edges,
                       const std::string& where) {
  if (offsets.front() != 0)
    throw StoreError(fmt::format("{}: array '{}' starts at {}, not 0 (the store is corrupt)", where,
                                 a::kRowOffsets, offsets.front()));
  for (std::size_t i = 0; i + 1 < offsets.size(); ++i) {
    if (offsets[i + 1] < offsets[i])
      throw StoreError(
          fmt::format("{}: array '{}' row {}: goes back from {} to {} (the store is corrupt)",
                      where, a::kRowOffsets, i, offsets[i], offsets[i + 1]));
  }
  if (static_cast<std::uint64_t>(offsets.back()) != edges)
    throw StoreError(
        fmt::format("{}: array '{}' ends at {}, the store has {} edges (the store is corrupt)",
                    where, a::kRowOffsets, offsets.back(), edges));
}

void check_node_values(const NodeGraphStore& store, const std::string& where) {
  const NodeGraphMetadata& m = store.metadata();
  const auto kinds = store.node_kind();
  const auto labels = store.node_label();
  const auto splits = store.node_split();
  const auto classes = static_cast<std::int64_t>(m.classes.size());
  for (std::size_t i = 0; i < store.num_nodes(); ++i) {
    const char* reason = nullptr;
    if (kinds[i] >= m.node_kinds.size()) {
      reason = "node kind outside the manifest's node_kinds";
    } else if (labels[i] < kNoLabel || labels[i] >= classes) {
      reason = "label neither -1 nor a class";
    } else if (splits[i] >= kNodeSplitNames.size()) {
      reason = "split id above 3";
    } else if (splits[i] != 0 && labels[i] == kNoLabel) {
      reason = "in a split but without a label";
    }
    if (reason != nullptr)
      throw StoreError(
          fmt::format("{}: node {}: {} (kind {}, label {}, split {}) (the store is corrupt)", where,
                      i, reason, kinds[i], labels[i], splits[i]));
  }
}

}  // namespace

NodeGraphStore NodeGraphStore::open(const std::filesystem::path& path,
                                    StoreVerification verification) {
  const std::string where = util::printable_path(path);
  const std::string kind = store_kind_at(path);
  if (kind != kNodeGraphStoreKind)
    throw StoreError(fmt::format("{}: a store of kind '{}', not a node-graph store", where,
                                 util::printable(kind, util::kMaxQuotedNameBytes)));
  const std::string text = util::read_file(path / kManifestFileName);
  NodeGraphStore store;
  store.path_ = path;
  store.manifest_bytes_ = text.size();
  store.metadata_ = std::make_shared<const NodeGraphMetadata>(
      node_graph_metadata_from(unseal_manifest(text, where), where));
  const NodeGraphMetadata& m = *store.metadata_;

  for (const auto& spec : a::kSpecs) {
    const auto it = m.arrays.find(std::string(spec.name));
    if (it == m.arrays.end())
      throw StoreError(fmt::format("{}: manifest lists no array '{}'", where, spec.name));
    check_array_record(it->second, spec.name, spec.dtype, spec.element_bytes,
                       {expected_rows(m, spec.name)}, where);
  }
  const auto directory = canonical_directory(path, where);
  for (const auto& spec : a::kSpecs) {
    const ArrayRecord& record = m.arrays.at(std::string(spec.name));
    auto mapped = map_array_file(directory, spec.name, record, where);
    if (!spec.graph_data) check_checksum(*mapped, record, where);
    store.arrays_.emplace(std::string(spec.name), std::move(mapped));
  }
  store.row_offsets_ = store.typed<std::int64_t>(a::kRowOffsets);
  store.column_index_ = store.typed<std::int32_t>(a::kColumnIndex);
  store.edge_weight_ = store.typed<float>(a::kEdgeWeight);
  store.node_kind_ = store.typed<std::uint8_t>(a::kNodeKind);
  store.node_label_ = store.typed<std::int32_t>(a::kNodeLabel);
  store.node_split_ = store.typed<std::uint8_t>(a::kNodeSplit);
  check_row_offsets(store.row_offsets_, m.num_edges, where);
  check_node_values(store, where);
  if (verification == StoreVerification::kFull) store.verify_all();
  return store;
}

template <typename T>
std::span<const T> NodeGraphStore::typed(std::string_view name) const {
  const auto bytes = array(name)->bytes();
  return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
}

std::vector<std::uint32_t> NodeGraphStore::nodes_in(NodeSplit split) const {
  std::vector<std::uint32_t> nodes;
  for (std::size_t i = 0; i < node_split_.size(); ++i)
    if (node_split_[i] == static_cast<std::uint8_t>(split))
      nodes.push_back(static_cast<std::uint32_t>(i));
  return nodes;
}

void NodeGraphStore::verify_all() const {
  const std::string where = util::printable_path(path_);
  for (const auto& [name, mapped] : arrays_) {
    const ArrayRecord& record = metadata_->arrays.at(name);
    // Through the file, not the mapping, so verification does not grow this process's RSS.
    if (util::checksum_hex(util::checksum_file(mapped->path())) != record.xxh3)
      throw StoreError(fmt::format("{}: checksum mismatch in '{}' (the store is corrupt)", where,
                                   util::printable(record.file, util::kMaxQuotedNameBytes)));
  }
  const auto nodes = static_cast<std::int64_t>(num_nodes());
  for (std::size_t row = 0; row < num_nodes(); ++row) {
    std::int64_t previous = -1;
    for (auto e = row_offsets_[row]; e < row_offsets_[row + 1]; ++e) {
      const auto column = column_index_[static_cast<std::size_t>(e)];
      const float weight = edge_weight_[static_cast<std::size_t>(e)];
      const char* reason = nullptr;
      if (column < 0 || column >= nodes) {
        reason = "column outside the nodes";
      } else if (column <= previous) {
        reason = "columns not ascending within the row";
      } else if (!std::isfinite(weight)) {
        reason = "weight not finite";
      }
      if (reason != nullptr)
        throw StoreError(
            fmt::format("{}: row {} entry {}: {} (column {}, weight {}) (the store is corrupt)",
                        where, row, e, reason, column, weight));
      previous = column;
    }
  }
}

const std::shared_ptr<const util::MappedFile>& NodeGraphStore::array(std::string_view name) const {
  const auto it = arrays_.find(name);
  if (it == arrays_.end())
    throw StoreError(fmt::format("{}: no array '{}'", util::printable_path(path_), name));
  return it->second;
}

std::uint64_t NodeGraphStore::bytes_on_disk() const {
  std::uint64_t total = manifest_bytes_;
  for (const auto& [name, mapped] : arrays_) total += mapped->size();
  return total;
}

}  // namespace headroom::store
