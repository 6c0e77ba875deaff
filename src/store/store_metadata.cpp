#include "headroom/store/store_metadata.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <stdexcept>

#include "headroom/can/reader_settings.hpp"
#include "headroom/store/manifest_seal.hpp"
#include "headroom/store/store_error.hpp"
#include "headroom/util/bounded_json.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::store {
namespace {

constexpr const char* kChecksumField = "manifest_xxh3";

std::uint64_t checksum_of(const nlohmann::json& json) {
  const std::string canonical = json.dump();  // nlohmann orders object keys: the dump is canonical
  return util::checksum_bytes(std::as_bytes(std::span(canonical.data(), canonical.size())));
}

}  // namespace

void to_json(nlohmann::json& json, const StoreMetadata& m) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : m.files) {
    files.push_back({{"path", f.path},
                     {"split", f.split},
                     {"attack_type", f.attack_type},
                     {"rows", f.rows},
                     {"attack_rows", f.attack_rows},
                     {"skipped_rows", f.skipped_rows},
                     {"mostly_unknown_graphs", f.mostly_unknown_graphs},
                     {"first_graph", f.first_graph},
                     {"graphs", f.graphs}});
  }
  nlohmann::json splits = nlohmann::json::array();
  for (const auto& s : m.splits) splits.push_back({{"name", s.name}, {"role", s.role}});
  const auto arrays = render_array_records(m.arrays);
  json = {
      {"format", kStoreFormatName},
      {"version", kStoreFormatVersion},
      {"created_by", m.created_by},
      {"dataset_root", m.dataset_root},
      {"window", m.window},
      {"stride", m.stride},
      {"node_feature_count", m.node_feature_count},
      {"edge_feature_count", m.edge_feature_count},
      {"num_graphs", m.num_graphs},
      {"num_nodes", m.num_nodes},
      {"num_edges", m.num_edges},
      {"vocabulary", m.vocabulary},
      {"out_of_vocabulary_index", m.vocabulary.size()},
      {"vocabulary_from", m.vocabulary_from},
      {"splits", splits},
      {"attack_types", m.attack_types},
      {"files", files},
      {"excluded_files", m.excluded_files},
      {"validation",
       {{"fraction", m.validation_fraction}, {"seed", m.validation_seed}, {"by", m.validation_by}}},
      {"arrays", arrays}};
  // Written only when not the KD-GAT default, so that a default store's manifest stays what it
  // was before these options existed.
  if (m.node_features != graph::NodeFeatureOptions{}) {
    json["node_identity"] = graph::node_identity_name(m.node_features.identity);
    json["node_feature_groups"] = m.node_features.group_names();
  }
  if (m.node_features.identity == graph::NodeIdentity::kGiven)
    json["given_node_features"] = {{"features", m.node_features.given_features},
                                   {"identity_classes", m.node_features.given_classes}};
  // Likewise only for geometric stores and stores with a target, so that other manifests (and
  // their checksums) stay what they were.
  if (m.position_dimensions > 0)
    json["geometry"] = {{"position_dimensions", m.position_dimensions}, {"parents", m.has_parents}};
  if (!m.target_name.empty())
    json["graph_target"] = {{"name", m.target_name}, {"unit", m.target_unit}};
  // Likewise only for a --format other than auto.
  if (m.source_format != can::LogFormat::kAuto) {
    can::ReaderOptions reader;
    reader.format = m.source_format;
    reader.mapping = m.source_mapping;
    json["source_reader"] = can::render_reader_settings(reader);
  }
}

void from_json(const nlohmann::json& json, StoreMetadata& m) {
  m.created_by = json.at("created_by").get<std::string>();
  m.dataset_root = json.at("dataset_root").get<std::string>();
  m.window = json.at("window").get<std::uint32_t>();
  m.stride = json.at("stride").get<std::uint32_t>();
  m.node_feature_count = json.at("node_feature_count").get<std::uint32_t>();
  m.edge_feature_count = json.at("edge_feature_count").get<std::uint32_t>();
  m.num_graphs = json.at("num_graphs").get<std::uint64_t>();
  m.num_nodes = json.at("num_nodes").get<std::uint64_t>();
  m.num_edges = json.at("num_edges").get<std::uint64_t>();
  m.vocabulary = json.at("vocabulary").get<std::vector<std::uint32_t>>();
  m.splits.clear();
  for (const auto& s : json.at("splits")) m.splits.push_back({s.at("name"), s.at("role")});
  m.attack_types = json.at("attack_types").get<std::vector<std::string>>();
  m.files.clear();
  for (const auto& f : json.at("files")) {
    SourceFileRecord r;
    r.path = f.at("path").get<std::string>();
    r.split = f.at("split").get<std::uint32_t>();
    r.attack_type = f.at("attack_type").get<std::uint32_t>();
    r.rows = f.at("rows").get<std::uint64_t>();
    r.attack_rows = f.at("attack_rows").get<std::uint64_t>();
    r.skipped_rows = f.at("skipped_rows").get<std::uint64_t>();
    r.mostly_unknown_graphs = f.value("mostly_unknown_graphs", std::uint64_t{0});
    r.first_graph = f.at("first_graph").get<std::uint64_t>();
    r.graphs = f.at("graphs").get<std::uint64_t>();
    m.files.push_back(std::move(r));
  }
  m.excluded_files = json.at("excluded_files").get<std::vector<std::string>>();
  m.validation_fraction = json.at("validation").at("fraction").get<double>();
  m.validation_seed = json.at("validation").at("seed").get<std::uint64_t>();
  m.validation_by = json.at("validation").value("by", std::string("graphs"));
  m.vocabulary_from = json.value("vocabulary_from", std::string("all"));
  m.node_features = {};
  if (json.contains("node_identity"))
    m.node_features.identity =
        graph::parse_node_identity(json.at("node_identity").get<std::string>());
  if (m.node_features.identity == graph::NodeIdentity::kGiven) {
    const auto& given = json.at("given_node_features");
    m.node_features.given_features = given.at("features").get<std::uint32_t>();
    m.node_features.given_classes = given.at("identity_classes").get<std::uint32_t>();
  } else if (json.contains("node_feature_groups")) {
    graph::parse_feature_groups(json.at("node_feature_groups").get<std::vector<std::string>>(),
                                m.node_features);
  }
  const auto reader = can::parse_reader_settings(json.value("source_reader", nlohmann::json()));
  m.source_format = reader.format;
  m.source_mapping = reader.mapping;
  m.arrays = parse_array_records(json.at("arrays"));
  m.position_dimensions = 0;
  m.has_parents = false;
  if (json.contains("geometry")) {
    const auto& geometry = json.at("geometry");
    m.position_dimensions = geometry.at("position_dimensions").get<std::uint32_t>();
    m.has_parents = geometry.at("parents").get<bool>();
    if (m.position_dimensions != 2 && m.position_dimensions != 3)
      throw std::invalid_argument(fmt::format(
          "geometry.position_dimensions is {}; positions have 2 or 3", m.position_dimensions));
  }
  m.target_name.clear();
  m.target_unit.clear();
  if (json.contains("graph_target")) {
    m.target_name = json.at("graph_target").at("name").get<std::string>();
    m.target_unit = json.at("graph_target").at("unit").get<std::string>();
    if (m.target_name.empty())
      throw std::invalid_argument("graph_target.name is empty; a target is named");
  }
}

std::uint32_t identity_classes(const StoreMetadata& metadata) {
  return graph::identity_classes(metadata.node_features, metadata.vocabulary.size());
}

nlohmann::json content_identity(const StoreMetadata& metadata) {
  nlohmann::json content = metadata;
  content.erase("created_by");
  content.erase("dataset_root");
  return {{"window", metadata.window},
          {"stride", metadata.stride},
          {"node_identity", graph::node_identity_name(metadata.node_features.identity)},
          {"node_feature_groups", metadata.node_features.group_names()},
          {"vocabulary_from", metadata.vocabulary_from},
          {"validation_fraction", metadata.validation_fraction},
          {"validation_seed", metadata.validation_seed},
          {"validation_by", metadata.validation_by},
          {"graphs", metadata.num_graphs},
          {"content", util::checksum_hex(checksum_of(content))}};
}

nlohmann::json render_array_records(const std::map<std::string, ArrayRecord>& arrays) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [name, a] : arrays) {
    json[name] = {{"file", a.file},
                  {"dtype", a.dtype},
                  {"shape", a.shape},
                  {"bytes", a.bytes},
                  {"xxh3", a.xxh3}};
  }
  return json;
}

std::map<std::string, ArrayRecord> parse_array_records(const nlohmann::json& json) {
  std::map<std::string, ArrayRecord> arrays;
  for (const auto& [name, a] : json.items()) {
    ArrayRecord r;
    r.file = a.at("file").get<std::string>();
    r.dtype = a.at("dtype").get<std::string>();
    r.shape = a.at("shape").get<std::vector<std::uint64_t>>();
    r.bytes = a.at("bytes").get<std::uint64_t>();
    r.xxh3 = a.at("xxh3").get<std::string>();
    arrays.emplace(name, std::move(r));
  }
  return arrays;
}

std::string seal_manifest(nlohmann::json json) {
  json["format"] = kStoreFormatName;
  json["version"] = kStoreFormatVersion;
  json.erase(kChecksumField);
  json[kChecksumField] = util::checksum_hex(checksum_of(json));
  return json.dump(1) + "\n";
}

nlohmann::json unseal_manifest(const std::string& text, const std::string& where) {
  nlohmann::json json;
  try {
    json = util::parse_json(text);
  } catch (const nlohmann::json::exception& e) {
    throw StoreError(
        fmt::format("{}: manifest is not valid JSON ({})", where, util::printable(e.what())));
  }
  if (!json.is_object() || json.value("format", "") != kStoreFormatName) {
    throw StoreError(fmt::format("{}: not a headroom graph store manifest", where));
  }
  const int version = json.value("version", 0);
  if (version != kStoreFormatVersion) {
    throw StoreError(
        fmt::format("{}: store format version {} is not supported (this headroom reads {})", where,
                    version, kStoreFormatVersion));
  }
  if (!json.contains(kChecksumField) || !json[kChecksumField].is_string())
    throw StoreError(fmt::format("{}: manifest has no checksum string", where));
  const std::string recorded = json[kChecksumField].get<std::string>();
  json.erase(kChecksumField);
  if (util::checksum_hex(checksum_of(json)) != recorded) {
    throw StoreError(fmt::format("{}: manifest checksum mismatch (the store is corrupt)", where));
  }
  return json;
}

std::string manifest_kind(const nlohmann::json& manifest) {
  const auto it = manifest.find("kind");
  if (it == manifest.end()) return kWindowsStoreKind;
  return it->is_string() ? it->get<std::string>() : std::string("(not a string)");
}

std::string render_manifest(const StoreMetadata& metadata) { return seal_manifest(metadata); }

StoreMetadata parse_manifest(const std::string& text, const std::string& where) {
  const nlohmann::json json = unseal_manifest(text, where);
  if (const std::string kind = manifest_kind(json); kind != kWindowsStoreKind) {
    throw StoreError(fmt::format(
        "{}: a store of kind '{}', not of windowed graphs ({}); `headroom inspect` summarises it",
        where, util::printable(kind, util::kMaxQuotedNameBytes),
        kind == kNodeGraphStoreKind ? "one graph whose nodes are classified" : "unknown kind"));
  }
  try {
    return json.get<StoreMetadata>();
  } catch (const nlohmann::json::exception& e) {
    throw StoreError(
        fmt::format("{}: manifest is incomplete ({})", where, util::printable(e.what())));
  } catch (const std::invalid_argument& e) {
    throw StoreError(fmt::format("{}: manifest: {}", where, util::printable(e.what())));
  }
}

}  // namespace headroom::store
