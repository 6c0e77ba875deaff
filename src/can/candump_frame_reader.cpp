#include "headroom/can/candump_frame_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "headroom/can/hex.hpp"
#include "headroom/can/log_format.hpp"
#include "headroom/can/text_fields.hpp"
#include "headroom/util/input_error.hpp"
#include "line_frame_loop.hpp"

namespace headroom::can {

CandumpFrameReader::CandumpFrameReader(std::filesystem::path file, BadRowPolicy policy,
                                       std::size_t block_bytes)
    : lines_(std::move(file), block_bytes), policy_(policy) {}

bool CandumpFrameReader::fail(std::string_view column, std::string reason) {
  error_column_ = column;
  error_reason_ = std::move(reason);
  return false;
}

bool CandumpFrameReader::parse_line(std::string_view line, CanFrame& frame) {
  frame = CanFrame{};
  line = trim(line);
  std::string_view rest = line;
  const bool timestamped = line.front() == '(';
  if (timestamped) {
    const std::size_t close = line.find(')');
    if (close == std::string_view::npos) {
      return fail("timestamp", "missing ')' after the timestamp");
    }
    const std::string_view stamp = trim(line.substr(1, close - 1));
    const auto [ptr, ec] =
        std::from_chars(stamp.data(), stamp.data() + stamp.size(), frame.timestamp_s);
    if (stamp.empty() || ec != std::errc() || ptr != stamp.data() + stamp.size() ||
        !std::isfinite(frame.timestamp_s)) {
      return fail("timestamp", fmt::format("timestamp '{}' is not a number", stamp));
    }
    if (!plausible_timestamp(frame.timestamp_s))
      return fail("timestamp", implausible_timestamp_reason(stamp));
    rest = line.substr(close + 1);
  } else if (line.find('#') != std::string_view::npos) {
    // The log layout (ID#DATA) always has a timestamp; only the screen layout may omit it.
    return fail("timestamp", "expected '(seconds)' at the start of a candump line");
  }

  const std::string_view interface = next_token(rest);
  if (interface.empty()) return fail("interface", "missing interface name after the timestamp");
  const std::string_view frame_text = next_token(rest);
  if (frame_text.empty()) return fail("frame", "missing frame after the interface name");
  if (frame_text.find('#') == std::string_view::npos) {
    return parse_screen_frame(frame_text, rest, frame);
  }
  const std::string_view extra = next_token(rest);
  // Recent candump versions may log the direction (T = sent, R = received) after the frame.
  if (!(extra.empty() || ((extra == "T" || extra == "R") && next_token(rest).empty()))) {
    return fail("frame", fmt::format("unexpected text '{}' after the frame", extra));
  }
  return parse_frame(frame_text, frame);
}

bool CandumpFrameReader::parse_id(std::string_view id_text, CanFrame& frame) {
  std::uint32_t id = 0;
  if (id_text.empty()) return fail("id", "ID is empty");
  bool hex = true;
  for (char c : id_text) hex = hex && hex_digit_value(c) >= 0;
  if (!hex) return fail("id", fmt::format("ID '{}' is not hexadecimal", id_text));
  if (!parse_hex_u32(id_text, id) || id > kMaxCanId) {
    return fail("id", fmt::format("ID '{}' exceeds 29 bits", id_text));
  }
  frame.id = id;
  return true;
}

bool CandumpFrameReader::parse_screen_frame(std::string_view id_text, std::string_view rest,
                                            CanFrame& frame) {
  const std::string_view length = next_token(rest);
  if (length.size() < 3 || length.front() != '[' || length.back() != ']') {
    return fail("frame", fmt::format("frame '{}' has neither ID#DATA (log layout) nor a '[length]' "
                                     "after the ID (screen layout)",
                                     id_text));
  }
  if (!parse_id(id_text, frame)) return false;
  const std::string_view digits = length.substr(1, length.size() - 2);
  // candump prints a CAN FD length with two digits ("[08]", "[64]"), a classic one with one.
  if (digits.size() == 2) return fail("data", "CAN FD frames are not supported");
  if (digits.size() != 1 || digits[0] < '0' || digits[0] > '8') {
    return fail("data", fmt::format("length '{}' is not a digit 0..8", length));
  }
  const auto bytes = static_cast<std::uint8_t>(digits[0] - '0');
  std::string_view token = next_token(rest);
  if (token == "remote") {
    // "remote request": the frame carries no data whatever length it requests.
    if (next_token(rest) != "request" || !next_token(rest).empty()) {
      return fail("data", "expected 'remote request' after the length");
    }
    return true;
  }
  for (std::uint8_t i = 0; i < bytes; ++i, token = next_token(rest)) {
    if (token.empty()) {
      return fail("data", fmt::format("length [{}] but only {} data bytes", bytes, i));
    }
    const int high = token.size() == 2 ? hex_digit_value(token[0]) : -1;
    const int low = token.size() == 2 ? hex_digit_value(token[1]) : -1;
    if (high < 0 || low < 0) {
      return fail("data", fmt::format("data byte '{}' is not two hex digits", token));
    }
    frame.data[i] = static_cast<std::uint8_t>(high * 16 + low);
  }
  // candump -a appends the payload as ASCII in quotes; anything else is not a frame.
  if (!token.empty() && token.front() != '\'') {
    return fail("data", fmt::format("unexpected text '{}' after {} data bytes", token, bytes));
  }
  frame.dlc = bytes;
  return true;
}

bool CandumpFrameReader::parse_frame(std::string_view text, CanFrame& frame) {
  const std::size_t hash = text.find('#');
  if (hash == std::string_view::npos) {
    return fail("frame", fmt::format("frame '{}' has no '#' between ID and data", text));
  }
  if (!parse_id(text.substr(0, hash), frame)) return false;

  std::string_view data = text.substr(hash + 1);
  if (!data.empty() && data.front() == '#') return fail("data", "CAN FD frames are not supported");
  if (!data.empty() && (data.front() == 'R' || data.front() == 'r')) {
    // Remote frame: it carries no data whatever length it requests.
    const std::string_view length = data.substr(1);
    const bool valid_length =
        length.empty() || (length.size() == 1 && length[0] >= '0' && length[0] <= '8');
    if (!valid_length) {
      return fail("data", fmt::format("remote frame length '{}' is not a digit 0..8", length));
    }
    return true;
  }
  // A classic frame of 8 bytes may carry its raw DLC 9..F after '_' (len8_dlc); the payload is
  // still 8 bytes.
  const std::size_t underscore = data.find('_');
  std::string_view raw_dlc;
  if (underscore != std::string_view::npos) {
    raw_dlc = data.substr(underscore + 1);
    data = data.substr(0, underscore);
  }
  const HexPayloadResult result = decode_hex_payload(data, frame.data, '.');
  if (result.error != HexPayloadError::kNone) {
    return fail("data", describe_hex_payload_error(result, "payload"));
  }
  if (underscore != std::string_view::npos &&
      (raw_dlc.size() != 1 || hex_digit_value(raw_dlc[0]) < 9 ||
       result.bytes != kMaxPayloadBytes)) {
    return fail("data",
                fmt::format("raw DLC suffix '_{}' needs 8 data bytes and a value 9..F", raw_dlc));
  }
  frame.dlc = result.bytes;
  return true;
}

std::size_t CandumpFrameReader::read(std::span<CanFrame> out) {
  return read_line_frames(
      lines_, out, policy_, skipped_, error_column_, error_reason_,
      [this](std::string_view line, CanFrame& frame) { return parse_line(line, frame); });
}

namespace {

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

// `candump -l`'s "(1436509052.249713) can0 123#DEADBEEF", or the screen layout.
bool is_candump_line(std::string_view line) {
  return line.front() == '(' || is_candump_screen_line(line);
}

std::unique_ptr<FrameReader> open_candump(const std::filesystem::path& file,
                                          const ReaderOptions& options) {
  return std::make_unique<CandumpFrameReader>(file, options.on_bad_row, options.block_bytes);
}

constexpr std::string_view kCandumpExtensions[] = {".log", ".txt"};

}  // namespace

const LogFormatDefinition& candump_log_format() {
  static const LogFormatDefinition definition{
      .name = "candump",
      .description = "candump -l logs, (TIME) IFACE ID#DATA, unlabelled: every frame normal",
      .extensions = kCandumpExtensions,
      .matches_first_line = &is_candump_line,
      .open = &open_candump};
  return definition;
}
}  // namespace headroom::can
