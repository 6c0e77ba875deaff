// The format registry (one line per format, in detection order), detection and the reader
// factory. Each format's definition lives beside its reader.
#include "headroom/can/log_format.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "format_sniffing.hpp"
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

std::string excerpt(std::string_view line) {
  constexpr std::size_t kMax = 80;
  std::string out;
  for (char c : line.substr(0, kMax)) out += printable_char(c);
  if (line.size() > kMax) out += "...";
  return out;
}

}  // namespace

// The registry. Detection tries the formats in this order: a format decided by its extension
// first, then the first-line tests (HCRL's text file before candump, both before the CSV
// presets). A new format is its reader, its definition beside it, and one line here. A function's
// static, so that it is built on first use whatever the order of static initialisation.
std::span<const LogFormatDefinition* const> log_formats() {
  static const LogFormatDefinition* const formats[] = {
      &parquet_log_format(),        &hcrl_text_log_format(), &candump_log_format(),
      &can_train_test_log_format(), &hcrl_csv_log_format(),  &mapped_csv_log_format(),
  };
  return formats;
}

const LogFormatDefinition* find_log_format(LogFormat format) {
  for (const auto* definition : log_formats())
    if (definition->name == format.name) return definition;
  return nullptr;
}

std::vector<std::string> log_format_choices() {
  std::vector<std::string> choices = {std::string(LogFormat::kAuto.name)};
  for (const auto* definition : log_formats()) choices.emplace_back(definition->name);
  return choices;
}

std::optional<LogFormat> parse_log_format(std::string_view name) {
  const std::string_view wanted = trim(name);
  if (iequals(LogFormat::kAuto.name, wanted)) return LogFormat::kAuto;
  for (const auto* definition : log_formats()) {
    if (iequals(definition->name, wanted)) return LogFormat{definition->name};
  }
  return std::nullopt;
}

std::string_view log_format_name(LogFormat format) {
  if (format == LogFormat::kAuto) return LogFormat::kAuto.name;
  const auto* definition = find_log_format(format);
  return definition != nullptr ? definition->name : "unknown";
}

bool is_can_log_file(const std::filesystem::path& file) {
  const std::string extension = file.extension().string();
  for (const auto* definition : log_formats())
    for (const auto known : definition->extensions)
      if (iequals(extension, known)) return true;
  return false;
}

LogFormat detect_format(const std::filesystem::path& file) {
  const std::string extension = file.extension().string();
  for (const auto* definition : log_formats()) {
    if (!definition->detected_by_extension) continue;
    for (const auto known : definition->extensions) {
      if (!iequals(extension, known)) continue;
      // Opening the file here gives a missing or empty file the same message as a text log.
      LineSource probe(file, 1);
      return LogFormat{definition->name};
    }
  }
  const FirstLine first = first_content_line(file);
  for (const auto* definition : log_formats()) {
    if (definition->matches_first_line != nullptr && definition->matches_first_line(first.text))
      return LogFormat{definition->name};
  }
  throw util::InputError(
      file, first.number, "",
      fmt::format("unrecognised CAN log format (line '{}'); pass --format csv with a column "
                  "mapping, or name the format with --format ({})",
                  excerpt(first.text), fmt::join(log_format_choices(), ", ")));
}

std::unique_ptr<FrameReader> open_frame_reader(const std::filesystem::path& file,
                                               const ReaderOptions& options) {
  const LogFormat format =
      options.format == LogFormat::kAuto ? detect_format(file) : options.format;
  if (const auto* definition = find_log_format(format); definition != nullptr)
    return definition->open(file, options);
  throw util::InputError(file, 0, "", "no reader for this format");
}

}  // namespace headroom::can
