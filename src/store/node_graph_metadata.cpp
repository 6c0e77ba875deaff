#include "headroom/store/node_graph_metadata.hpp"

#include <fmt/format.h>

#include <system_error>

#include "headroom/store/store_error.hpp"
#include "headroom/util/file_reader.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::store {

std::string render_node_graph_manifest(const NodeGraphMetadata& m) {
  const auto arrays = render_array_records(m.arrays);
  return seal_manifest(
      {{"kind", kNodeGraphStoreKind},
       {"created_by", m.created_by},
       {"source", m.source},
       {"num_nodes", m.num_nodes},
       {"num_edges", m.num_edges},
       {"node_kinds", m.node_kinds},
       {"classes", m.classes},
       {"node_names", m.node_names},
       {"validation", {{"fraction", m.validation_fraction}, {"seed", m.validation_seed}}},
       {"build", m.build},
       {"arrays", arrays}});
}

NodeGraphMetadata node_graph_metadata_from(const nlohmann::json& json, const std::string& where) {
  NodeGraphMetadata m;
  try {
    m.created_by = json.at("created_by").get<std::string>();
    m.source = json.at("source").get<std::string>();
    m.num_nodes = json.at("num_nodes").get<std::uint64_t>();
    m.num_edges = json.at("num_edges").get<std::uint64_t>();
    m.node_kinds = json.at("node_kinds").get<std::vector<std::string>>();
    m.classes = json.at("classes").get<std::vector<std::string>>();
    m.node_names = json.at("node_names").get<std::vector<std::string>>();
    m.validation_fraction = json.at("validation").at("fraction").get<double>();
    m.validation_seed = json.at("validation").at("seed").get<std::uint64_t>();
    m.build = json.at("build");
    m.arrays = parse_array_records(json.at("arrays"));
  } catch (const nlohmann::json::exception& e) {
    throw StoreError(
        fmt::format("{}: manifest is incomplete ({})", where, util::printable(e.what())));
  }
  if (m.node_names.size() != m.num_nodes) {
    throw StoreError(
        fmt::format("{}: manifest names {} nodes, num_nodes is {} (the store is corrupt)", where,
                    m.node_names.size(), m.num_nodes));
  }
  // Node indices are int32 in column_index.
  if (m.num_nodes > static_cast<std::uint64_t>(INT32_MAX)) {
    throw StoreError(fmt::format(
        "{}: num_nodes is {}, more than column indices can number (the store is corrupt)", where,
        m.num_nodes));
  }
  if (m.node_kinds.empty() || m.node_kinds.size() > 256) {
    throw StoreError(
        fmt::format("{}: manifest has {} node kinds, not 1 to 256 (the store is corrupt)", where,
                    m.node_kinds.size()));
  }
  if (m.classes.size() > static_cast<std::size_t>(INT32_MAX)) {
    throw StoreError(
        fmt::format("{}: manifest has too many classes (the store is corrupt)", where));
  }
  return m;
}

std::string store_kind_at(const std::filesystem::path& path) {
  const std::string where = util::printable_path(path);
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec))
    throw StoreError(fmt::format("{}: no graph store here (not a directory)", where));
  const auto manifest = path / kManifestFileName;
  if (!std::filesystem::is_regular_file(manifest, ec))
    throw StoreError(
        fmt::format("{}: not a complete graph store (no regular {})", where, kManifestFileName));
  const auto text = util::read_file_if_readable(manifest);
  if (!text) throw StoreError(fmt::format("{}: cannot read {}", where, kManifestFileName));
  return manifest_kind(unseal_manifest(*text, where));
}

}  // namespace headroom::store
