#include "headroom/can/hex.hpp"

#include <fmt/format.h>

namespace headroom::can {

std::string printable_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7F) return std::string(1, c);
  return fmt::format("\\x{:02X}", u);
}

std::string describe_hex_payload_error(const HexPayloadResult& result, std::string_view what) {
  switch (result.error) {
    case HexPayloadError::kNone:
      return {};
    case HexPayloadError::kInvalidDigit:
      return fmt::format("invalid hex digit '{}' in {}", printable_char(result.bad_char), what);
    case HexPayloadError::kOddDigits:
      return fmt::format("odd number of hex digits ({}) in {}", result.digits, what);
    case HexPayloadError::kSplitByte:
      return fmt::format("separator inside a byte in {}", what);
    case HexPayloadError::kTooLong:
      return fmt::format("{} has {} bytes (max {})", what, result.digits / 2, kMaxPayloadBytes);
  }
  return fmt::format("malformed {}", what);
}

}  // namespace headroom::can
