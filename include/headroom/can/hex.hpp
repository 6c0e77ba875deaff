// Hex decoding of CAN IDs and payloads, shared by every text reader. Inline because it runs once or
// more per row on the hot path. Pure functions: thread-safe, no allocation except to describe an
// error.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "headroom/can/can_frame.hpp"

namespace headroom::can {

// The largest arbitration ID CAN can carry (29-bit extended frame).
inline constexpr std::uint32_t kMaxCanId = 0x1FFFFFFF;

namespace hex_detail {

constexpr std::array<std::int8_t, 256> make_digit_table() {
  std::array<std::int8_t, 256> table{};
  for (auto& v : table) v = -1;
  for (int c = '0'; c <= '9'; ++c)
    table[static_cast<std::size_t>(c)] = static_cast<std::int8_t>(c - '0');
  for (int c = 'a'; c <= 'f'; ++c)
    table[static_cast<std::size_t>(c)] = static_cast<std::int8_t>(c - 'a' + 10);
  for (int c = 'A'; c <= 'F'; ++c)
    table[static_cast<std::size_t>(c)] = static_cast<std::int8_t>(c - 'A' + 10);
  return table;
}

inline constexpr std::array<std::int8_t, 256> kDigitTable = make_digit_table();

}  // namespace hex_detail

// 0..15, or -1 when `c` is not a hex digit.
constexpr int hex_digit_value(char c) {
  return hex_detail::kDigitTable[static_cast<unsigned char>(c)];
}

// `text` without surrounding ASCII whitespace (space, tab, CR, LF, VT, FF): exporters pad hex
// fields (a trailing tab in a public dataset's Parquet payloads), and padding is not data.
constexpr std::string_view trim_ascii_whitespace(std::string_view text) {
  constexpr std::string_view kWhitespace = " \t\r\n\v\f";
  const auto first = text.find_first_not_of(kWhitespace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kWhitespace) - first + 1);
}

constexpr std::string_view strip_hex_prefix(std::string_view text) {
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
    return text.substr(2);
  return text;
}

// Parses an unsigned hex number of 1..8 digits (after an optional "0x"; surrounding whitespace is
// ignored); false when `text` is empty, holds a non-hex character or does not fit in 32 bits.
// Range checks are the caller's.
constexpr bool parse_hex_u32(std::string_view text, std::uint32_t& value) {
  text = strip_hex_prefix(trim_ascii_whitespace(text));
  // Leading zeros do not count towards the 8-digit limit ("00000123" is common in 29-bit logs).
  while (text.size() > 1 && text.front() == '0') text.remove_prefix(1);
  if (text.empty() || text.size() > 8) return false;
  std::uint32_t v = 0;
  for (char c : text) {
    const int d = hex_digit_value(c);
    if (d < 0) return false;
    v = (v << 4) | static_cast<std::uint32_t>(d);
  }
  value = v;
  return true;
}

enum class HexPayloadError : std::uint8_t {
  kNone,
  kInvalidDigit,  // `bad_char` holds the offending character
  kOddDigits,     // a byte is missing its second digit
  kSplitByte,     // a separator between the two digits of one byte
  kTooLong,       // more than kMaxPayloadBytes bytes; `digits` holds the count
};

struct HexPayloadResult {
  HexPayloadError error = HexPayloadError::kNone;
  char bad_char = 0;
  std::uint8_t bytes = 0;  // decoded bytes (valid only without error)
  std::size_t digits = 0;  // hex digits seen
};

// Decodes a payload such as "DEADBEEF" (2 digits per byte) into `out`, which must be zeroed by
// the caller. Surrounding whitespace is ignored. `separator` (e.g. ' ' or '.'), when non-zero, may
// appear between bytes and is skipped. Never writes past out[kMaxPayloadBytes - 1].
inline HexPayloadResult decode_hex_payload(std::string_view text,
                                           std::array<std::uint8_t, kMaxPayloadBytes>& out,
                                           char separator = 0) {
  text = trim_ascii_whitespace(text);
  HexPayloadResult result;
  std::size_t digits = 0;
  unsigned pending = 0;
  for (char c : text) {
    const int d = hex_digit_value(c);
    if (d < 0) {
      if (separator != 0 && c == separator) {
        if (digits % 2 != 0) {
          result.error = HexPayloadError::kSplitByte;
          return result;
        }
        continue;
      }
      result.error = HexPayloadError::kInvalidDigit;
      result.bad_char = c;
      return result;
    }
    if (digits % 2 == 0) {
      pending = static_cast<unsigned>(d) << 4;
    } else if (digits / 2 < kMaxPayloadBytes) {
      out[digits / 2] = static_cast<std::uint8_t>(pending | static_cast<unsigned>(d));
    }
    ++digits;
  }
  result.digits = digits;
  if (digits % 2 != 0) {
    result.error = HexPayloadError::kOddDigits;
  } else if (digits / 2 > kMaxPayloadBytes) {
    result.error = HexPayloadError::kTooLong;
  } else {
    result.bytes = static_cast<std::uint8_t>(digits / 2);
  }
  return result;
}

// A one-line reason for a failed decode_hex_payload(), e.g. "invalid hex digit 'G' in payload",
// "payload has 9 bytes (max 8)". `what` names the field ("payload").
std::string describe_hex_payload_error(const HexPayloadResult& result, std::string_view what);

// A character as it should appear in an error message: printable ones as is, others as \xNN.
std::string printable_char(char c);

}  // namespace headroom::can
