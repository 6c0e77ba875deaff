// Format names, format detection and the reader factory.
#include "headroom/can/log_format.hpp"

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "headroom/can/candump_frame_reader.hpp"
#include "headroom/can/csv_frame_reader.hpp"
#include "headroom/can/hcrl_text_frame_reader.hpp"
#include "headroom/can/hex.hpp"
#include "headroom/can/line_source.hpp"
#include "headroom/can/parquet_frame_reader.hpp"
#include "headroom/can/text_fields.hpp"
#include "headroom/util/input_error.hpp"

namespace headroom::can {
namespace {

struct FormatName {
  LogFormat format;
  std::string_view name;
};

constexpr FormatName kFormatNames[] = {
    {LogFormat::kAuto, "auto"},
    {LogFormat::kCanTrainTest, "can-train-and-test"},
    {LogFormat::kHcrlCarHacking, "hcrl-car-hacking"},
    {LogFormat::kHcrlCarHackingText, "hcrl-car-hacking-text"},
    {LogFormat::kParquet, "parquet"},
    {LogFormat::kCandump, "candump"},
    {LogFormat::kMappedCsv, "csv"},
};

// Detection only needs the first line; a small block keeps it cheap on large files.
constexpr std::size_t kSniffBlockBytes = std::size_t{64} << 10;

struct FirstLine {
  std::string text;
  std::uint64_t number = 0;
};

FirstLine first_content_line(const std::filesystem::path& file) {
  LineSource lines(file, kSniffBlockBytes);
  std::string_view line;
  while (lines.next(line)) {
    if (!is_blank(line)) return {std::string(trim(line)), lines.line_number()};
  }
  throw util::InputError(file, 0, "", "file holds only blank lines");
}

// Splits a sniffed line on commas; trimmed, surrounding quotes dropped. Detection only.
std::vector<std::string_view> split_commas(std::string_view line) {
  std::vector<std::string_view> fields;
  for (;;) {
    const std::size_t comma = line.find(',');
    std::string_view field = trim(line.substr(0, comma));
    if (field.size() >= 2 && field.front() == '"' && field.back() == '"') {
      field = field.substr(1, field.size() - 2);
    }
    fields.push_back(field);
    if (comma == std::string_view::npos) return fields;
    line.remove_prefix(comma + 1);
  }
}

bool is_number(std::string_view text) {
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && ec == std::errc() && ptr == text.data() + text.size();
}

bool is_can_train_test_header(const std::vector<std::string_view>& fields) {
  return fields.size() == 4 && iequals(fields[0], "timestamp") &&
         iequals(fields[1], "arbitration_id") && iequals(fields[2], "data_field") &&
         iequals(fields[3], "attack");
}

bool is_hcrl_header(const std::vector<std::string_view>& fields) {
  return fields.size() >= 2 && iequals(fields[0], "timestamp") && iequals(fields[1], "can id");
}

// A header-less HCRL row: time, hex ID, DLC 0..8, DLC byte columns and the flag.
bool is_hcrl_row(const std::vector<std::string_view>& fields) {
  if (fields.size() < 4 || !is_number(fields[0])) return false;
  std::uint32_t id = 0;
  if (!parse_hex_u32(fields[1], id)) return false;
  const std::string_view dlc = fields[2];
  if (dlc.size() != 1 || dlc[0] < '0' || dlc[0] > '8') return false;
  return fields.size() == static_cast<std::size_t>(dlc[0] - '0') + 4;
}

std::string excerpt(std::string_view line) {
  constexpr std::size_t kMax = 80;
  std::string out;
  for (char c : line.substr(0, kMax)) out += printable_char(c);
  if (line.size() > kMax) out += "...";
  return out;
}

// candump's screen layout without a timestamp: "can0  123   [2]  DE AD".
bool is_candump_screen_line(std::string_view text) {
  std::vector<std::string_view> tokens;
  std::size_t i = 0;
  while (tokens.size() < 3 && i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    const std::size_t start = i;
    while (i < text.size() && !is_space(text[i])) ++i;
    if (i > start) tokens.push_back(text.substr(start, i - start));
  }
  if (tokens.size() < 3) return false;
  const auto id = tokens[1];
  const auto length = tokens[2];
  const bool hex_id =
      !id.empty() && id.size() <= 8 &&
      std::all_of(id.begin(), id.end(), [](char c) { return hex_digit_value(c) >= 0; });
  return hex_id && length.size() >= 3 && length.front() == '[' && length.back() == ']';
}

}  // namespace

std::optional<LogFormat> parse_log_format(std::string_view name) {
  const std::string_view wanted = trim(name);
  for (const auto& entry : kFormatNames) {
    if (iequals(entry.name, wanted)) return entry.format;
  }
  return std::nullopt;
}

std::string_view log_format_name(LogFormat format) {
  for (const auto& entry : kFormatNames) {
    if (entry.format == format) return entry.name;
  }
  return "unknown";
}

bool is_can_log_file(const std::filesystem::path& file) {
  const std::string extension = file.extension().string();
  return iequals(extension, ".csv") || iequals(extension, ".parquet") ||
         iequals(extension, ".log") || iequals(extension, ".txt");
}

LogFormat detect_format(const std::filesystem::path& file) {
  if (iequals(file.extension().string(), ".parquet")) {
    // Opening the file here gives a missing or empty file the same message as a text log.
    LineSource probe(file, 1);
    return LogFormat::kParquet;
  }
  const FirstLine first = first_content_line(file);
  // HCRL's attack-free text file: "Timestamp: 1479121434.850202        ID: 0350 ...".
  if (istarts_with(first.text, "timestamp:")) return LogFormat::kHcrlCarHackingText;
  if (first.text.front() == '(' || is_candump_screen_line(first.text)) return LogFormat::kCandump;
  const auto fields = split_commas(first.text);
  if (is_can_train_test_header(fields)) return LogFormat::kCanTrainTest;
  if (is_hcrl_header(fields) || is_hcrl_row(fields)) return LogFormat::kHcrlCarHacking;
  throw util::InputError(
      file, first.number, "",
      fmt::format("unrecognised CAN log format (line '{}'); pass --format csv with a column "
                  "mapping, or name the format with --format",
                  excerpt(first.text)));
}

std::unique_ptr<FrameReader> open_frame_reader(const std::filesystem::path& file,
                                               const ReaderOptions& options) {
  const LogFormat format =
      options.format == LogFormat::kAuto ? detect_format(file) : options.format;
  switch (format) {
    case LogFormat::kCanTrainTest:
      return std::make_unique<CsvFrameReader>(file, can_train_test_mapping(), options.on_bad_row,
                                              options.block_bytes);
    case LogFormat::kHcrlCarHacking: {
      // The published files have no header, hand-made ones often do: the first line decides.
      const bool has_header = !is_number(split_commas(first_content_line(file).text).front());
      return std::make_unique<CsvFrameReader>(file, hcrl_car_hacking_mapping(has_header),
                                              options.on_bad_row, options.block_bytes);
    }
    case LogFormat::kParquet:
      return std::make_unique<ParquetFrameReader>(file, options.on_bad_row,
                                                  options.parquet_batch_rows);
    case LogFormat::kCandump:
      return std::make_unique<CandumpFrameReader>(file, options.on_bad_row, options.block_bytes);
    case LogFormat::kHcrlCarHackingText:
      return std::make_unique<HcrlTextFrameReader>(file, options.on_bad_row, options.block_bytes);
    case LogFormat::kMappedCsv:
      return std::make_unique<CsvFrameReader>(file, options.mapping, options.on_bad_row,
                                              options.block_bytes);
    case LogFormat::kAuto:
      break;
  }
  throw util::InputError(file, 0, "", "no reader for this format");
}

}  // namespace headroom::can
