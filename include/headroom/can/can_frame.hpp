// One CAN frame as every reader produces it, whatever the log format.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

namespace headroom::can {

inline constexpr std::size_t kMaxPayloadBytes = 8;

struct CanFrame {
  double timestamp_s = 0.0;  // seconds, as written in the log (usually Unix time)
  std::uint32_t id = 0;      // arbitration ID (11- or 29-bit)
  std::uint8_t dlc = 0;      // payload length in bytes, 0..8
  std::uint8_t label = 0;    // 1 = attack frame, 0 = normal
  std::array<std::uint8_t, kMaxPayloadBytes> data{};  // bytes at and past `dlc` are 0

  friend bool operator==(const CanFrame&, const CanFrame&) = default;
};

// Every reader refuses a timestamp further than this from 0 (about 3,000 years in seconds): no log
// runs that long or starts that far from the Unix epoch, so such a value is a corrupt field or a
// log in milliseconds or finer read as seconds. The timing features are differences of these
// values, which stay exact enough and far from overflow below this bound.
inline constexpr double kMaxTimestampMagnitude_s = 1e11;

// False for a value beyond the bound, and for infinities and NaN.
inline bool plausible_timestamp(double seconds) {
  return std::fabs(seconds) <= kMaxTimestampMagnitude_s;
}

// The reason a reader gives for an implausible timestamp, quoting it as the log wrote it.
inline std::string implausible_timestamp_reason(std::string_view text) {
  return "timestamp '" + std::string(text) +
         "' is not a plausible time in seconds: more than 1e11 s (about 3,000 years) from 0";
}

}  // namespace headroom::can
