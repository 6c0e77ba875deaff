#include "headroom/store/graph_store.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "headroom/store/store_arrays.hpp"
#include "headroom/store/store_error.hpp"
#include "headroom/util/file_writer.hpp"

namespace headroom::store {
GraphStore GraphStore::open(const std::filesystem::path& path, StoreVerification verification) {
  const std::string where = path.string();
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
                                   record.dtype, dtype));
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
      throw StoreError(
          fmt::format("{}: array file '{}' has {} bytes, manifest says {} (truncated store?)",
                      where, record.file, mapped->size(), record.bytes));
    }
    if (!spec.graph_data &&
        util::checksum_hex(util::checksum_bytes(mapped->bytes())) != record.xxh3) {
      throw StoreError(
          fmt::format("{}: checksum mismatch in '{}' (the store is corrupt)", where, record.file));
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

  if (verification == StoreVerification::kFull) store.verify_all();
  return store;
}

template <typename T>
std::span<const T> GraphStore::typed(std::string_view name) const {
  const auto it = arrays_.find(name);
  if (it == arrays_.end()) throw StoreError(fmt::format("{}: no array '{}'", path_.string(), name));
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
                                   path_.string(), record.file));
    }
  }
}

const std::shared_ptr<const util::MappedFile>& GraphStore::array(std::string_view name) const {
  const auto it = arrays_.find(name);
  if (it == arrays_.end()) throw StoreError(fmt::format("{}: no array '{}'", path_.string(), name));
  return it->second;
}

std::uint64_t GraphStore::bytes_on_disk() const {
  std::uint64_t total = manifest_bytes_;
  for (const auto& [name, mapped] : arrays_) total += mapped->size();
  return total;
}

}  // namespace headroom::store
