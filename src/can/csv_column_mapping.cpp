// CsvColumnMapping::validate() and the two CSV presets.
#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

#include "headroom/can/log_format.hpp"
#include "headroom/can/text_fields.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::can {
namespace {

// `why` may quote a column name or label value as the user gave it: escaped and bounded.
[[noreturn]] void reject(std::string_view field, const std::string& why) {
  throw std::invalid_argument(
      fmt::format("CSV column mapping: {}: {}", field, util::printable(why)));
}

void check_position(std::string_view field, const std::string& column) {
  if (column.empty()) return;
  int position = -1;
  const auto [ptr, ec] = std::from_chars(column.data(), column.data() + column.size(), position);
  if (ec != std::errc() || ptr != column.data() + column.size() || position < 0) {
    reject(field, fmt::format("'{}' is not a 0-based column position, and the file has no header",
                              column));
  }
}

}  // namespace

void CsvColumnMapping::validate() const {
  if (delimiter == '"' || delimiter == '\n' || delimiter == '\r' || delimiter == '\0' ||
      delimiter == ' ') {
    reject("delimiter", "must not be a quote, a space, a line break or NUL");
  }
  if (trim(id).empty()) reject("id", "the ID column is required");
  if (payload.empty() == payload_bytes.empty()) {
    reject("payload", "name either one hex payload column or the per-byte columns, not both");
  }
  if (payload_bytes.size() > kMaxPayloadBytes) {
    reject("payload_bytes",
           fmt::format("{} byte columns (max {})", payload_bytes.size(), kMaxPayloadBytes));
  }
  for (const auto& column : payload_bytes) {
    if (trim(column).empty()) reject("payload_bytes", "a byte column has an empty name");
  }
  if (ragged_payload && (dlc.empty() || payload_bytes.empty())) {
    reject("ragged_payload", "needs a dlc column and per-byte payload columns");
  }
  if (!label.empty() && attack_values.empty()) {
    reject("attack_values", "a label column needs at least one attack value");
  }
  for (const auto& attack : attack_values) {
    for (const auto& normal : normal_values) {
      if (iequals(attack, normal)) {
        reject("normal_values", fmt::format("'{}' is also an attack value", normal));
      }
    }
  }
  if (!has_header) {
    check_position("timestamp", timestamp);
    check_position("id", id);
    check_position("payload", payload);
    check_position("dlc", dlc);
    check_position("label", label);
    for (const auto& column : payload_bytes) check_position("payload_bytes", column);
  }
}

CsvColumnMapping can_train_test_mapping() {
  CsvColumnMapping mapping;
  mapping.timestamp = "timestamp";
  mapping.id = "arbitration_id";
  mapping.id_base = IdBase::kHex;
  mapping.payload = "data_field";
  mapping.label = "attack";
  mapping.attack_values = {"1"};
  mapping.normal_values = {"0"};
  return mapping;
}

CsvColumnMapping hcrl_car_hacking_mapping(bool has_header) {
  CsvColumnMapping mapping;
  mapping.has_header = has_header;
  mapping.id_base = IdBase::kHex;
  mapping.ragged_payload = true;
  mapping.attack_values = {"T"};
  mapping.normal_values = {"R"};
  if (has_header) {
    mapping.timestamp = "Timestamp";
    mapping.id = "CAN ID";
    mapping.dlc = "DLC";
    for (std::size_t i = 0; i < kMaxPayloadBytes; ++i) {
      mapping.payload_bytes.push_back(fmt::format("DATA[{}]", i));
    }
    mapping.label = "Flag";
  } else {
    // Positions: time, ID, DLC, eight byte columns, flag.
    mapping.timestamp = std::to_string(0);
    mapping.id = std::to_string(1);
    mapping.dlc = std::to_string(2);
    for (std::size_t i = 0; i < kMaxPayloadBytes; ++i) {
      mapping.payload_bytes.push_back(std::to_string(3 + i));
    }
    mapping.label = std::to_string(3 + kMaxPayloadBytes);
  }
  return mapping;
}

}  // namespace headroom::can
