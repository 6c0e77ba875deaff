#include "headroom/can/reader_settings.hpp"

#include <stdexcept>
#include <string>

namespace headroom::can {
namespace {

nlohmann::json render_mapping(const CsvColumnMapping& m) {
  return {{"delimiter", std::string(1, m.delimiter)},
          {"has_header", m.has_header},
          {"timestamp", m.timestamp},
          {"id", m.id},
          {"id_base", m.id_base == IdBase::kHex ? "hex" : "decimal"},
          {"payload", m.payload},
          {"payload_bytes", m.payload_bytes},
          {"dlc", m.dlc},
          {"dlc_unit", m.dlc_unit == DlcUnit::kBytes ? "bytes" : "bits"},
          {"ragged_payload", m.ragged_payload},
          {"label", m.label},
          {"attack_values", m.attack_values},
          {"normal_values", m.normal_values}};
}

CsvColumnMapping parse_mapping(const nlohmann::json& json) {
  CsvColumnMapping m;
  const auto delimiter = json.at("delimiter").get<std::string>();
  if (delimiter.size() != 1)
    throw std::invalid_argument("csv_mapping.delimiter: not one character");
  m.delimiter = delimiter[0];
  m.has_header = json.at("has_header").get<bool>();
  m.timestamp = json.at("timestamp").get<std::string>();
  m.id = json.at("id").get<std::string>();
  m.id_base = json.at("id_base").get<std::string>() == "decimal" ? IdBase::kDecimal : IdBase::kHex;
  m.payload = json.at("payload").get<std::string>();
  m.payload_bytes = json.at("payload_bytes").get<std::vector<std::string>>();
  m.dlc = json.at("dlc").get<std::string>();
  m.dlc_unit = json.at("dlc_unit").get<std::string>() == "bits" ? DlcUnit::kBits : DlcUnit::kBytes;
  m.ragged_payload = json.at("ragged_payload").get<bool>();
  m.label = json.at("label").get<std::string>();
  m.attack_values = json.at("attack_values").get<std::vector<std::string>>();
  m.normal_values = json.at("normal_values").get<std::vector<std::string>>();
  m.validate();
  return m;
}

}  // namespace

nlohmann::json render_reader_settings(const ReaderOptions& options) {
  if (options.format == LogFormat::kAuto) return nullptr;
  nlohmann::json settings = {{"format", std::string(options.format.name)}};
  if (options.format == LogFormat::kMappedCsv)
    settings["csv_mapping"] = render_mapping(options.mapping);
  return settings;
}

ReaderOptions parse_reader_settings(const nlohmann::json& settings, ReaderOptions options) {
  if (settings.is_null()) return options;
  try {
    const auto name = settings.at("format").get<std::string>();
    const auto format = parse_log_format(name);
    if (!format) throw std::invalid_argument("format '" + name + "' is not one headroom reads");
    options.format = *format;
    if (options.format == LogFormat::kMappedCsv)
      options.mapping = parse_mapping(settings.at("csv_mapping"));
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("source_reader: ") + e.what());
  }
  return options;
}

}  // namespace headroom::can
