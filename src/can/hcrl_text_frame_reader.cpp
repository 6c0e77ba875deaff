#include "headroom/can/hcrl_text_frame_reader.hpp"

#include <charconv>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "headroom/can/hex.hpp"
#include "headroom/can/log_format.hpp"
#include "headroom/can/text_fields.hpp"
#include "line_frame_loop.hpp"

namespace headroom::can {
namespace {

// Takes "Label:" and the value after it from `rest`, whether the value is a token of its own
// ("ID: 0350") or glued to the colon ("ID:0350"). False when the next token is not that label.
bool take_labelled_value(std::string_view& rest, std::string_view label, std::string_view& value) {
  std::string_view probe = rest;
  const std::string_view token = next_token(probe);
  if (token.size() <= label.size() || !istarts_with(token, label) || token[label.size()] != ':') {
    return false;
  }
  rest = probe;
  value = token.substr(label.size() + 1);
  if (value.empty()) value = next_token(rest);
  return true;
}

bool all_hex(std::string_view text) {
  if (text.empty()) return false;
  for (const char c : text) {
    if (hex_digit_value(c) < 0) return false;
  }
  return true;
}

}  // namespace

HcrlTextFrameReader::HcrlTextFrameReader(std::filesystem::path file, BadRowPolicy policy,
                                         std::size_t block_bytes)
    : lines_(std::move(file), block_bytes), policy_(policy) {}

bool HcrlTextFrameReader::fail(std::string_view column, std::string reason) {
  error_column_ = column;
  error_reason_ = std::move(reason);
  return false;
}

bool HcrlTextFrameReader::parse_line(std::string_view line, CanFrame& frame) {
  frame = CanFrame{};  // label 0: the recording is attack-free
  std::string_view rest = line;
  return parse_timestamp(rest, frame) && parse_id(rest, frame) && parse_payload(rest, frame);
}

bool HcrlTextFrameReader::parse_timestamp(std::string_view& rest, CanFrame& frame) {
  std::string_view stamp;
  if (!take_labelled_value(rest, "Timestamp", stamp)) {
    return fail("timestamp", "expected 'Timestamp:' at the start of the line");
  }
  const auto [ptr, ec] =
      std::from_chars(stamp.data(), stamp.data() + stamp.size(), frame.timestamp_s);
  if (stamp.empty() || ec != std::errc() || ptr != stamp.data() + stamp.size() ||
      !std::isfinite(frame.timestamp_s)) {
    return fail("timestamp", fmt::format("timestamp '{}' is not a number", stamp));
  }
  if (!plausible_timestamp(frame.timestamp_s))
    return fail("timestamp", implausible_timestamp_reason(stamp));
  return true;
}

bool HcrlTextFrameReader::parse_id(std::string_view& rest, CanFrame& frame) {
  std::string_view id_text;
  if (!take_labelled_value(rest, "ID", id_text)) {
    return fail("id", "expected 'ID:' after the timestamp");
  }
  if (id_text.empty()) return fail("id", "ID is empty");
  if (!all_hex(id_text)) return fail("id", fmt::format("ID '{}' is not hexadecimal", id_text));
  std::uint32_t id = 0;
  if (!parse_hex_u32(id_text, id) || id > kMaxCanId) {
    return fail("id", fmt::format("ID '{}' exceeds 29 bits", id_text));
  }
  frame.id = id;
  return true;
}

bool HcrlTextFrameReader::parse_payload(std::string_view& rest, CanFrame& frame) {
  std::string_view dlc_text;
  if (!take_labelled_value(rest, "DLC", dlc_text)) {
    const std::string_view flags = next_token(rest);
    if (!all_hex(flags)) {
      return fail("flags", fmt::format("expected a hex flags field or 'DLC:' after the ID, found "
                                       "'{}'",
                                       flags));
    }
    if (!take_labelled_value(rest, "DLC", dlc_text)) {
      return fail("dlc", "expected 'DLC:' after the flags field");
    }
  }
  if (dlc_text.size() != 1 || dlc_text[0] < '0' || dlc_text[0] > '8') {
    return fail("dlc", fmt::format("DLC '{}' is not a digit 0..8", dlc_text));
  }
  const auto bytes = static_cast<std::uint8_t>(dlc_text[0] - '0');
  for (std::uint8_t i = 0; i < bytes; ++i) {
    const std::string_view token = next_token(rest);
    if (token.empty()) return fail("data", fmt::format("DLC {} but only {} data bytes", bytes, i));
    if (token.size() != 2 || !all_hex(token)) {
      return fail("data", fmt::format("data byte '{}' is not two hex digits", token));
    }
    frame.data[i] =
        static_cast<std::uint8_t>(hex_digit_value(token[0]) * 16 + hex_digit_value(token[1]));
  }
  if (const std::string_view extra = next_token(rest); !extra.empty()) {
    return fail("data", fmt::format("unexpected text '{}' after {} data bytes", extra, bytes));
  }
  frame.dlc = bytes;
  return true;
}

std::size_t HcrlTextFrameReader::read(std::span<CanFrame> out) {
  return read_line_frames(
      lines_, out, policy_, skipped_, error_column_, error_reason_,
      [this](std::string_view line, CanFrame& frame) { return parse_line(line, frame); });
}

namespace {

// "Timestamp: 1479121434.850202        ID: 0350 ...": HCRL's attack-free text file.
bool is_hcrl_text_line(std::string_view line) { return istarts_with(line, "timestamp:"); }

std::unique_ptr<FrameReader> open_hcrl_text(const std::filesystem::path& file,
                                            const ReaderOptions& options) {
  return std::make_unique<HcrlTextFrameReader>(file, options.on_bad_row, options.block_bytes);
}

constexpr std::string_view kHcrlTextExtensions[] = {".txt"};

}  // namespace

const LogFormatDefinition& hcrl_text_log_format() {
  static const LogFormatDefinition definition{
      .name = "hcrl-car-hacking-text",
      .description = "HCRL Car-Hacking's attack-free text file, unlabelled: every frame normal",
      .extensions = kHcrlTextExtensions,
      .matches_first_line = &is_hcrl_text_line,
      .open = &open_hcrl_text};
  return definition;
}
}  // namespace headroom::can
