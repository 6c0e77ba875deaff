#include "headroom/can/csv_frame_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "format_sniffing.hpp"
#include "headroom/can/hex.hpp"
#include "headroom/can/text_fields.hpp"
#include "headroom/util/input_error.hpp"
#include "line_frame_loop.hpp"

namespace headroom::can {
namespace {

// Lets the constructor reject a bad mapping before it opens the file.
std::filesystem::path after_validating(const CsvColumnMapping& mapping,
                                       std::filesystem::path file) {
  mapping.validate();
  return file;
}

// Why `text` is not a hexadecimal CAN ID; only called once parse_hex_u32 has refused it.
std::string hex_id_error(std::string_view text) {
  if (text.empty()) return "ID is empty";
  const std::string_view digits = strip_hex_prefix(text);
  const bool all_hex = !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) {
    return hex_digit_value(c) >= 0;
  });
  if (!all_hex) return fmt::format("ID '{}' is not hexadecimal", text);
  return fmt::format("ID '{}' exceeds 29 bits", text);
}

}  // namespace

CsvFrameReader::CsvFrameReader(std::filesystem::path file, CsvColumnMapping mapping,
                               BadRowPolicy policy, std::size_t block_bytes)
    : lines_(after_validating(mapping, std::move(file)), block_bytes),
      mapping_(std::move(mapping)),
      policy_(policy) {
  std::vector<std::string> header;
  std::uint64_t header_line = 0;
  if (mapping_.has_header) {
    std::string_view line;
    bool found = false;
    while (lines_.next(line)) {
      if (!is_blank(line)) {
        found = true;
        break;
      }
    }
    if (!found)
      throw util::InputError(path(), 0, "", "no header line (the file holds only blank lines)");
    header_line = lines_.line_number();
    if (!split(line)) throw util::InputError(path(), header_line, error_column_, error_reason_);
    header.assign(fields_.begin(), fields_.end());
  }
  resolve_columns(header, header_line);
  header_ = std::move(header);
  fields_.reserve(std::max<std::size_t>(min_width_, header_width_) + 4);

  attack_text_ = fmt::format("{}", fmt::join(mapping_.attack_values, ", "));
  normal_text_ = fmt::format("{}", fmt::join(mapping_.normal_values, ", "));
}

CsvFrameReader::Column CsvFrameReader::resolve(const std::string& wanted,
                                               const std::vector<std::string>& header,
                                               std::uint64_t header_line) const {
  Column column;
  if (wanted.empty()) return column;
  if (!mapping_.has_header) {
    // validate() guarantees a non-negative number.
    std::from_chars(wanted.data(), wanted.data() + wanted.size(), column.index);
    column.name = wanted;
    return column;
  }
  const std::string_view key = trim(wanted);
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (iequals(header[i], key)) {
      column.index = static_cast<int>(i);
      column.name = header[i];
      return column;
    }
  }
  throw util::InputError(
      path(), header_line, std::string(key),
      fmt::format("column not found in the header (columns: {})", fmt::join(header, ", ")));
}

void CsvFrameReader::resolve_columns(const std::vector<std::string>& header,
                                     std::uint64_t header_line) {
  timestamp_ = resolve(mapping_.timestamp, header, header_line);
  id_ = resolve(mapping_.id, header, header_line);
  payload_ = resolve(mapping_.payload, header, header_line);
  dlc_ = resolve(mapping_.dlc, header, header_line);
  label_ = resolve(mapping_.label, header, header_line);
  byte_columns_ = mapping_.payload_bytes.size();
  for (std::size_t i = 0; i < byte_columns_; ++i) {
    bytes_[i] = resolve(mapping_.payload_bytes[i], header, header_line);
  }

  int highest = std::max({timestamp_.index, id_.index, payload_.index, dlc_.index, label_.index});
  for (std::size_t i = 0; i < byte_columns_; ++i) highest = std::max(highest, bytes_[i].index);
  min_width_ = static_cast<std::size_t>(highest + 1);
  header_width_ = header.size();

  if (mapping_.ragged_payload) {
    // A short row leaves out the last byte columns; that only makes sense when they are one run
    // after the DLC column, so that the DLC says how many are absent before they are reached.
    for (std::size_t i = 1; i < byte_columns_; ++i) {
      if (bytes_[i].index != bytes_[0].index + static_cast<int>(i)) {
        throw util::InputError(path(), header_line, bytes_[i].name,
                               "a ragged payload needs the byte columns side by side, in order");
      }
    }
    if (dlc_.index >= bytes_[0].index) {
      throw util::InputError(path(), header_line, dlc_.name,
                             "a ragged payload needs the DLC column before the byte columns");
    }
    ragged_after_ = bytes_[byte_columns_ - 1].index;
  }
}

std::string CsvFrameReader::field_name(std::size_t position) const {
  if (position < header_.size()) return header_[position];
  return std::to_string(position);
}

bool CsvFrameReader::fail(const Column& column, std::string reason) {
  error_column_ = column.name;
  error_reason_ = std::move(reason);
  return false;
}

bool CsvFrameReader::fail(std::string column, std::string reason) {
  error_column_ = std::move(column);
  error_reason_ = std::move(reason);
  return false;
}

bool CsvFrameReader::split(std::string_view line) {
  fields_.clear();
  const char delimiter = mapping_.delimiter;
  const std::size_t size = line.size();
  std::size_t pos = 0;
  // With a tab delimiter a tab separates fields and must not be trimmed away as padding.
  const auto padding = [delimiter](char c) { return c != delimiter && is_space(c); };
  for (;;) {
    while (pos < size && padding(line[pos])) ++pos;
    if (pos < size && line[pos] == '"') {
      std::size_t close = pos + 1;
      for (;;) {
        close = line.find('"', close);
        if (close == std::string_view::npos) {
          return fail(field_name(fields_.size()), "unterminated quoted field");
        }
        if (close + 1 < size && line[close + 1] == '"') {  // "" is an escaped quote
          close += 2;
          continue;
        }
        break;
      }
      fields_.push_back(line.substr(pos + 1, close - pos - 1));
      pos = close + 1;
      while (pos < size && padding(line[pos])) ++pos;
      if (pos < size && line[pos] != delimiter) {
        return fail(
            field_name(fields_.size() - 1),
            fmt::format("unexpected '{}' after a closing quote", printable_char(line[pos])));
      }
    } else {
      std::size_t stop = line.find(delimiter, pos);
      if (stop == std::string_view::npos) stop = size;
      std::size_t last = stop;
      while (last > pos && padding(line[last - 1])) --last;
      fields_.push_back(line.substr(pos, last - pos));
      pos = stop;
    }
    if (pos >= size) return true;
    ++pos;  // the delimiter
  }
}

bool CsvFrameReader::label_in(std::string_view text, const std::vector<std::string>& values) const {
  for (const auto& value : values) {
    if (iequals(text, value)) return true;
  }
  return false;
}

bool CsvFrameReader::parse_dlc(int& dlc) {
  if (dlc_.index < 0) return true;
  if (static_cast<std::size_t>(dlc_.index) >= fields_.size()) {
    return fail("", fmt::format("expected {} columns, found {}",
                                header_width_ > 0 ? header_width_ : min_width_, fields_.size()));
  }
  const std::string_view text = fields_[static_cast<std::size_t>(dlc_.index)];
  unsigned value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return fail(dlc_, fmt::format("DLC '{}' is not a number", text));
  }
  constexpr unsigned kBitsPerByte = 8;
  if (mapping_.dlc_unit == DlcUnit::kBits) {
    if (value > kMaxPayloadBytes * kBitsPerByte) {
      return fail(dlc_, fmt::format("DLC {} bits out of range 0..{}", value,
                                    kMaxPayloadBytes * kBitsPerByte));
    }
    if (value % kBitsPerByte != 0) {
      return fail(dlc_, fmt::format("DLC {} bits is not a whole number of bytes", value));
    }
    value /= kBitsPerByte;
  } else if (value > kMaxPayloadBytes) {
    // 16, 24, .. 64 is what an exporter writing the length in bits produces.
    const bool looks_like_bits =
        value % kBitsPerByte == 0 && value <= kMaxPayloadBytes * kBitsPerByte;
    return fail(dlc_, looks_like_bits
                          ? fmt::format("DLC {} out of range 0..{} (a length in bits? "
                                        "--csv-dlc-unit bits reads it as {} bytes)",
                                        value, kMaxPayloadBytes, value / kBitsPerByte)
                          : fmt::format("DLC {} out of range 0..{}", value, kMaxPayloadBytes));
  }
  dlc = static_cast<int>(value);
  if (byte_columns_ > 0 && static_cast<std::size_t>(dlc) > byte_columns_) {
    return fail(dlc_, fmt::format("DLC {} but only {} payload byte columns are mapped", dlc,
                                  byte_columns_));
  }
  return true;
}

// The parts of parse_row, run once per row. The field parsers are always inlined: as calls they
// cost about 50 instructions a row (4% of a whole read, measured with callgrind), and their error
// messages make them too big for the compiler to inline on its own. parse_payload_bytes, a loop,
// is left to the compiler: as a call it runs in fewer instructions than inlined.
[[gnu::always_inline]] bool CsvFrameReader::check_width(int dlc, int missing) {
  const std::size_t found = fields_.size();
  if (header_width_ > 0) {
    const std::size_t expected = header_width_ - static_cast<std::size_t>(missing);
    if (found != expected) {
      if (missing > 0) {
        return fail("",
                    fmt::format("expected {} columns for DLC {}, found {}", expected, dlc, found));
      }
      return fail("", fmt::format("expected {} columns, found {}", expected, found));
    }
  } else if (found + static_cast<std::size_t>(missing) < min_width_) {
    return fail("", fmt::format("expected {} columns, found {}",
                                min_width_ - static_cast<std::size_t>(missing), found));
  }
  return true;
}

[[gnu::always_inline]] std::string_view CsvFrameReader::field(const Column& column,
                                                              int missing) const {
  const int position = column.index > ragged_after_ ? column.index - missing : column.index;
  return fields_[static_cast<std::size_t>(position)];
}

[[gnu::always_inline]] bool CsvFrameReader::parse_timestamp(std::string_view text,
                                                            double& timestamp_s) {
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), timestamp_s);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return fail(timestamp_, fmt::format("timestamp '{}' is not a number", text));
  }
  if (!std::isfinite(timestamp_s)) {
    return fail(timestamp_, fmt::format("timestamp '{}' is not a finite number", text));
  }
  if (!plausible_timestamp(timestamp_s)) {
    return fail(timestamp_, implausible_timestamp_reason(text));
  }
  return true;
}

[[gnu::always_inline]] bool CsvFrameReader::parse_id(std::string_view text, std::uint32_t& can_id) {
  std::uint32_t id = 0;
  if (mapping_.id_base == IdBase::kHex) {
    if (!parse_hex_u32(text, id)) return fail(id_, hex_id_error(text));
  } else {
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
    if (text.empty()) return fail(id_, "ID is empty");
    if (ec == std::errc::result_out_of_range) {
      return fail(id_, fmt::format("ID '{}' exceeds 29 bits", text));
    }
    if (ec != std::errc() || ptr != text.data() + text.size()) {
      return fail(id_, fmt::format("ID '{}' is not a decimal number", text));
    }
  }
  if (id > kMaxCanId) return fail(id_, fmt::format("ID '{}' exceeds 29 bits", text));
  can_id = id;
  return true;
}

[[gnu::always_inline]] bool CsvFrameReader::parse_payload(std::string_view text, int dlc,
                                                          CanFrame& frame) {
  const HexPayloadResult result = decode_hex_payload(text, frame.data, ' ');
  if (result.error != HexPayloadError::kNone) {
    return fail(payload_, describe_hex_payload_error(result, "payload"));
  }
  if (dlc >= 0 && result.bytes != dlc) {
    return fail(payload_, fmt::format("DLC {} but the payload has {} bytes", dlc, result.bytes));
  }
  frame.dlc = result.bytes;
  return true;
}

bool CsvFrameReader::parse_payload_bytes(int dlc, int missing, CanFrame& frame) {
  const std::size_t wanted = dlc >= 0 ? static_cast<std::size_t>(dlc) : byte_columns_;
  std::size_t count = 0;
  for (std::size_t i = 0; i < wanted; ++i) {
    const std::string_view raw = field(bytes_[i], missing);
    if (dlc < 0 && raw.empty()) {
      // Without a DLC, trailing empty byte columns mark a shorter frame.
      for (std::size_t j = i + 1; j < wanted; ++j) {
        if (!field(bytes_[j], missing).empty()) {
          return fail(bytes_[j],
                      fmt::format("payload byte set after the empty column '{}'", bytes_[i].name));
        }
      }
      break;
    }
    const std::string_view text = strip_hex_prefix(raw);
    std::uint32_t value = 0;
    if (text.empty() || text.size() > 2 || !parse_hex_u32(text, value)) {
      return fail(bytes_[i], fmt::format("byte '{}' is not a hex byte (00..FF)", raw));
    }
    frame.data[i] = static_cast<std::uint8_t>(value);
    ++count;
  }
  frame.dlc = static_cast<std::uint8_t>(count);
  return true;
}

[[gnu::always_inline]] bool CsvFrameReader::parse_label(std::string_view text,
                                                        std::uint8_t& label) {
  if (label_in(text, mapping_.attack_values)) {
    label = 1;
  } else if (!mapping_.normal_values.empty() && !label_in(text, mapping_.normal_values)) {
    return fail(label_, fmt::format("label '{}' is neither attack ({}) nor normal ({})", text,
                                    attack_text_, normal_text_));
  }
  return true;
}

bool CsvFrameReader::parse_row(std::string_view line, CanFrame& frame) {
  frame = CanFrame{};
  const std::uint64_t row_index = data_rows_++;
  if (!split(line)) return false;

  // The DLC comes first: in a ragged row it says how many byte columns are absent, and so where
  // the later columns are.
  int dlc = -1;
  if (!parse_dlc(dlc)) return false;
  int missing = 0;
  if (mapping_.ragged_payload) missing = static_cast<int>(byte_columns_) - dlc;
  if (!check_width(dlc, missing)) return false;

  if (timestamp_.index >= 0) {
    if (!parse_timestamp(field(timestamp_, missing), frame.timestamp_s)) return false;
  } else {
    frame.timestamp_s = static_cast<double>(row_index);
  }
  if (!parse_id(field(id_, missing), frame.id)) return false;
  if (payload_.index >= 0) {
    if (!parse_payload(field(payload_, missing), dlc, frame)) return false;
  } else if (!parse_payload_bytes(dlc, missing, frame)) {
    return false;
  }
  return label_.index < 0 || parse_label(field(label_, missing), frame.label);
}

std::size_t CsvFrameReader::read(std::span<CanFrame> out) {
  return read_line_frames(
      lines_, out, policy_, skipped_, error_column_, error_reason_,
      [this](std::string_view line, CanFrame& frame) { return parse_row(line, frame); });
}

// --- The three CSV formats of the registry: two presets and the mapped CSV ------------------

namespace {

bool is_can_train_test_line(std::string_view line) {
  const auto fields = split_commas(line);
  return fields.size() == 4 && iequals(fields[0], "timestamp") &&
         iequals(fields[1], "arbitration_id") && iequals(fields[2], "data_field") &&
         iequals(fields[3], "attack");
}

// HCRL's header, or a header-less HCRL row: time, hex ID, DLC 0..8, DLC byte columns, the flag.
bool is_hcrl_line(std::string_view line) {
  const auto fields = split_commas(line);
  if (fields.size() >= 2 && iequals(fields[0], "timestamp") && iequals(fields[1], "can id"))
    return true;
  if (fields.size() < 4 || !is_number(fields[0])) return false;
  std::uint32_t id = 0;
  if (!parse_hex_u32(fields[1], id)) return false;
  const std::string_view dlc = fields[2];
  if (dlc.size() != 1 || dlc[0] < '0' || dlc[0] > '8') return false;
  return fields.size() == static_cast<std::size_t>(dlc[0] - '0') + 4;
}

std::unique_ptr<FrameReader> open_can_train_test(const std::filesystem::path& file,
                                                 const ReaderOptions& options) {
  return std::make_unique<CsvFrameReader>(file, can_train_test_mapping(), options.on_bad_row,
                                          options.block_bytes);
}

std::unique_ptr<FrameReader> open_hcrl_csv(const std::filesystem::path& file,
                                           const ReaderOptions& options) {
  // The published files have no header, hand-made ones often do: the first line decides.
  const bool has_header = !is_number(split_commas(first_content_line(file).text).front());
  return std::make_unique<CsvFrameReader>(file, hcrl_car_hacking_mapping(has_header),
                                          options.on_bad_row, options.block_bytes);
}

std::unique_ptr<FrameReader> open_mapped_csv(const std::filesystem::path& file,
                                             const ReaderOptions& options) {
  return std::make_unique<CsvFrameReader>(file, options.mapping, options.on_bad_row,
                                          options.block_bytes);
}

constexpr std::string_view kCsvExtensions[] = {".csv"};
constexpr std::string_view kHcrlExtensions[] = {".csv", ".txt"};

}  // namespace

const LogFormatDefinition& can_train_test_log_format() {
  static const LogFormatDefinition definition{
      .name = "can-train-and-test",
      .description = "can-train-and-test / KD-GAT CSV: timestamp,arbitration_id,data_field,attack",
      .extensions = kCsvExtensions,
      .matches_first_line = &is_can_train_test_line,
      .open = &open_can_train_test};
  return definition;
}

const LogFormatDefinition& hcrl_csv_log_format() {
  static const LogFormatDefinition definition{
      .name = "hcrl-car-hacking",
      .description = "HCRL Car-Hacking CSV: Timestamp,CAN ID,DLC,DATA[0..DLC-1],Flag (T/R)",
      .extensions = kHcrlExtensions,
      .matches_first_line = &is_hcrl_line,
      .open = &open_hcrl_csv};
  return definition;
}

const LogFormatDefinition& mapped_csv_log_format() {
  static const LogFormatDefinition definition{
      .name = "csv",
      .description = "any other CSV, described by the --csv-* column mapping",
      .extensions = kCsvExtensions,
      .open = &open_mapped_csv};
  return definition;
}

}  // namespace headroom::can
