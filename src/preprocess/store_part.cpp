#include "headroom/preprocess/store_part.hpp"

#include <fmt/format.h>
#include <algorithm>

#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "headroom/util/bounded_json.hpp"
#include "headroom/util/file_reader.hpp"
#include "headroom/util/file_writer.hpp"

namespace headroom::preprocess {
namespace {

constexpr const char* kChecksumField = "part_xxh3";

std::uint64_t checksum_of(const nlohmann::json& json) {
  const std::string canonical = json.dump();  // nlohmann orders object keys: the dump is canonical
  return util::checksum_bytes(std::as_bytes(std::span(canonical.data(), canonical.size())));
}

nlohmann::json mapping_json(const can::CsvColumnMapping& m) {
  return {{"delimiter", std::string(1, m.delimiter)},
          {"has_header", m.has_header},
          {"timestamp", m.timestamp},
          {"id", m.id},
          {"id_base", m.id_base == can::IdBase::kHex ? "hex" : "dec"},
          {"payload", m.payload},
          {"payload_bytes", m.payload_bytes},
          {"dlc", m.dlc},
          {"dlc_unit", m.dlc_unit == can::DlcUnit::kBits ? "bits" : "bytes"},
          {"ragged_payload", m.ragged_payload},
          {"label", m.label},
          {"attack_values", m.attack_values},
          {"normal_values", m.normal_values}};
}

nlohmann::json dataset_files_json(const dataset::DatasetLayout& layout) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& file : layout.files) files.push_back({file.relative_path, file.size_bytes});
  return {{"files", files}, {"excluded", layout.excluded}};
}

// A setting's value for a message: strings without their quotes.
std::string shown(const std::string& json_text) {
  const auto value = util::parse_json(json_text);
  return value.is_string() ? value.get<std::string>() : json_text;
}

std::string dataset_difference(const std::string& part_text, const std::string& ours_text) {
  const auto part = util::parse_json(part_text).at("files");
  const auto ours = util::parse_json(ours_text).at("files");
  for (std::size_t i = 0; i < std::max(part.size(), ours.size()); ++i) {
    if (i < part.size() && i < ours.size() && part[i] == ours[i]) continue;
    if (i >= ours.size())
      return fmt::format("it read {} which this command's dataset lacks", part[i][0].dump());
    if (i >= part.size())
      return fmt::format("this command's dataset has {} which it did not list", ours[i][0].dump());
    return fmt::format("it listed {} ({} bytes) where this command's dataset has {} ({} bytes)",
                       part[i][0].dump(), part[i][1].dump(), ours[i][0].dump(), ours[i][1].dump());
  }
  return "the files left out by --exclude differ";
}

// 16 hex digits, as util::checksum_hex writes them; nlohmann's type_error (a manifest that is not
// what a part writes) otherwise.
std::uint64_t parse_checksum(const std::string& hex) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(hex.data(), hex.data() + hex.size(), value, 16);
  if (hex.size() != 16 || error != std::errc() || end != hex.data() + hex.size())
    throw nlohmann::json::type_error::create(302, "'" + hex + "' is not a checksum", nullptr);
  return value;
}

nlohmann::json record_json(const PartFileRecord& r) {
  nlohmann::json json = {{"file", r.file},
                         {"path", r.path},
                         {"rows", r.rows},
                         {"attack_rows", r.attack_rows},
                         {"skipped_rows", r.skipped_rows},
                         {"graphs", r.graphs},
                         {"nodes", r.nodes},
                         {"edges", r.edges},
                         {"frames_hash", util::checksum_hex(r.frames_hash)},
                         {"can_ids", r.can_ids},
                         {"has_frames", r.has_frames}};
  nlohmann::json checksums = nlohmann::json::object();
  for (const auto& [suffix, checksum] : r.checksums)
    checksums[suffix] = util::checksum_hex(checksum);
  json["checksums"] = checksums;
  // Only when not the KD-GAT width: parts of default stores keep their manifests.
  if (r.node_feature_count != graph::kNodeFeatureCount)
    json["node_feature_count"] = r.node_feature_count;
  return json;
}

PartFileRecord record_from(const nlohmann::json& j) {
  PartFileRecord r;
  r.file = j.at("file").get<std::size_t>();
  r.path = j.at("path").get<std::string>();
  r.rows = j.at("rows").get<std::uint64_t>();
  r.attack_rows = j.at("attack_rows").get<std::uint64_t>();
  r.skipped_rows = j.at("skipped_rows").get<std::uint64_t>();
  r.graphs = j.at("graphs").get<std::uint64_t>();
  r.nodes = j.at("nodes").get<std::uint64_t>();
  r.edges = j.at("edges").get<std::uint64_t>();
  r.frames_hash = parse_checksum(j.at("frames_hash").get<std::string>());
  r.can_ids = j.at("can_ids").get<std::vector<std::uint32_t>>();
  r.has_frames = j.at("has_frames").get<bool>();
  r.node_feature_count = j.value("node_feature_count", graph::kNodeFeatureCount);
  for (const auto& [suffix, hex] : j.at("checksums").items())
    r.checksums[suffix] = parse_checksum(hex.get<std::string>());
  return r;
}

}  // namespace

PartSettings part_settings(const dataset::DatasetLayout& layout, const PreprocessOptions& options) {
  const auto& reader = options.reader;
  const bool mapped = reader.format == can::LogFormat::kMappedCsv;
  const std::map<std::string, nlohmann::json> values = {
      {"headroom version", HEADROOM_VERSION},
      {"--window", options.window.window},
      {"--stride", options.window.stride},
      {"--format", std::string(can::log_format_name(reader.format))},
      {"--csv-*", mapped ? mapping_json(reader.mapping) : nlohmann::json()},
      {"--on-bad-row", reader.on_bad_row == can::BadRowPolicy::kSkip ? "skip" : "error"},
      {"--val-fraction", options.validation_fraction},
      {"--seed", options.seed},
      {"--val-by", options.validation_by},
      {"--vocabulary-from", options.vocabulary_from},
      {"--node-identity", std::string(graph::node_identity_name(options.features.identity))},
      {"--node-features", options.features.group_names()},
      {"--keep-duplicates", options.keep_duplicate_files},
      {"--exclude", options.scan.exclude_substrings},
      {kDatasetFilesSetting, dataset_files_json(layout)},
  };
  PartSettings settings;
  for (const auto& [name, value] : values) settings.emplace(name, value.dump());
  return settings;
}

std::string settings_difference(const PartSettings& part, const PartSettings& ours) {
  for (const auto& [name, value] : ours) {
    const auto it = part.find(name);
    if (it == part.end()) return fmt::format("it records no '{}'", name);
    if (it->second == value) continue;
    if (name == kDatasetFilesSetting) return dataset_difference(it->second, value);
    return fmt::format("{} {} (this command: {})", name, shown(it->second), shown(value));
  }
  for (const auto& [name, value] : part)
    if (!ours.contains(name)) return fmt::format("it records '{}', unknown here", name);
  return {};
}

std::filesystem::path parts_directory(const std::filesystem::path& store) {
  auto normal = std::filesystem::absolute(store).lexically_normal();
  if (!normal.has_filename()) normal = normal.parent_path();  // "out/" names "out"
  normal += ".parts";
  return normal;
}

std::filesystem::path part_file_prefix(const std::filesystem::path& part, std::size_t file) {
  return part / fmt::format("file-{:06}", file);
}

store::SegmentSummary part_segment(const std::filesystem::path& part,
                                   const PartFileRecord& record) {
  return {part_file_prefix(part, record.file),
          store::SegmentKeys::kRawCanIds,
          record.graphs,
          record.nodes,
          record.edges,
          record.node_feature_count};
}

std::filesystem::path part_frames_file(const std::filesystem::path& part, std::size_t file) {
  auto path = part_file_prefix(part, file);
  path += kFramesFileSuffix;
  return path;
}

std::string render_part_manifest(const StorePart& part) {
  nlohmann::json settings = nlohmann::json::object();
  for (const auto& [name, value] : part.settings) settings[name] = util::parse_json(value);
  nlohmann::json files = nlohmann::json::array();
  for (const auto& record : part.files) files.push_back(record_json(record));
  nlohmann::json json = {{"format", kPartFormatName},
                         {"version", kPartFormatVersion},
                         {"created_by", part.created_by},
                         {"shard", {{"index", part.shard.index}, {"count", part.shard.count}}},
                         {"settings", settings},
                         {"files", files}};
  json[kChecksumField] = util::checksum_hex(checksum_of(json));
  return json.dump(1) + "\n";
}

StorePart read_part_manifest(const std::filesystem::path& part) {
  const auto where = fmt::format("store part '{}'", part.string());
  const auto file = part / kPartManifestFileName;
  if (!std::filesystem::exists(file))
    throw std::runtime_error(
        fmt::format("{} has no {} (not a part headroom wrote)", where, kPartManifestFileName));
  nlohmann::json json;
  try {
    json = util::parse_json(util::read_file(file));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(
        fmt::format("{}: {} is not valid JSON ({})", where, kPartManifestFileName, e.what()));
  }
  if (!json.is_object() || json.value("format", "") != kPartFormatName)
    throw std::runtime_error(fmt::format("{}: not a headroom store part", where));
  if (json.value("version", 0) != kPartFormatVersion)
    throw std::runtime_error(
        fmt::format("{}: part format version {} (this headroom reads {}): rebuild the part with "
                    "this headroom",
                    where, json.value("version", 0), kPartFormatVersion));
  const std::string recorded = json.value(kChecksumField, "");
  json.erase(kChecksumField);
  if (util::checksum_hex(checksum_of(json)) != recorded)
    throw std::runtime_error(fmt::format("{}: checksum mismatch (the part is corrupt)", where));
  try {
    StorePart result;
    result.shard = {json.at("shard").at("index").get<std::uint32_t>(),
                    json.at("shard").at("count").get<std::uint32_t>()};
    result.created_by = json.at("created_by").get<std::string>();
    for (const auto& [name, value] : json.at("settings").items())
      result.settings.emplace(name, value.dump());
    for (const auto& record : json.at("files")) result.files.push_back(record_from(record));
    return result;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: manifest is incomplete ({})", where, e.what()));
  }
}

namespace {

bool starts_with(const std::string& text, std::string_view prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// `file-<6 or more digits>` and a segment suffix or ".frames": what a part holds per file.
bool is_part_file(const std::filesystem::path& relative, bool is_directory) {
  const std::string name = relative.string();
  if (is_directory || !relative.parent_path().empty()) return false;
  if (name == kPartManifestFileName) return true;
  constexpr std::string_view prefix = "file-";
  if (!starts_with(name, prefix)) return false;
  const auto digits_end = name.find_first_not_of("0123456789", prefix.size());
  if (digits_end == std::string::npos || digits_end < prefix.size() + 6) return false;
  const std::string suffix = name.substr(digits_end);
  return suffix == ".frames" ||
         std::find(store::kSegmentFileSuffixes.begin(), store::kSegmentFileSuffixes.end(),
                   suffix) != store::kSegmentFileSuffixes.end();
}

bool is_staged_part_entry(const std::filesystem::path& relative, bool is_directory) {
  return is_part_file(relative, is_directory) ||
         (!is_directory && relative.parent_path().empty() &&
          starts_with(relative.string(), std::string(kPartManifestFileName) + ".tmp-headroom-"));
}

std::string why_not_a_part(const std::filesystem::path& directory) {
  try {
    read_part_manifest(directory);
  } catch (const std::exception& e) {
    return e.what();
  }
  return util::describe_foreign_entries(util::foreign_entries(directory, is_part_file));
}

}  // namespace

util::DirectoryKind store_part_kind() {
  return {"store part", why_not_a_part, is_staged_part_entry};
}

void verify_part_file(const std::filesystem::path& part, ShardSpec shard,
                      const PartFileRecord& record) {
  const auto rebuild =
      fmt::format("the part is corrupt: rebuild it with --shard {}/{}", shard.index, shard.count);
  std::vector<std::string> suffixes(store::kSegmentFileSuffixes.begin(),
                                    store::kSegmentFileSuffixes.end());
  if (record.has_frames) suffixes.emplace_back(kFramesFileSuffix);
  for (const auto& suffix : suffixes) {
    auto file = part_file_prefix(part, record.file);
    file += suffix;
    const auto name = file.filename().string();
    const auto recorded = record.checksums.find(suffix);
    if (recorded == record.checksums.end())
      throw std::runtime_error(fmt::format("part {}: its manifest records no checksum of '{}' ({})",
                                           shard_name(shard), name, rebuild));
    if (util::checksum_file(file) != recorded->second)
      throw std::runtime_error(fmt::format("part {}: '{}' does not match its checksum ({})",
                                           shard_name(shard), name, rebuild));
  }
}

}  // namespace headroom::preprocess
