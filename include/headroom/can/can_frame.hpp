// One CAN frame as every reader produces it, whatever the log format.
#pragma once

#include <array>
#include <cstdint>

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

}  // namespace headroom::can
