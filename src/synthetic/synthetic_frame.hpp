// One frame of synthetic traffic. Time is kept in integer microseconds so that generation needs no
// floating point (and stays bit-exact across platforms); the CSV writer prints it as seconds.
#pragma once

#include <array>
#include <cstdint>

namespace headroom::synthetic::detail {

struct SyntheticFrame {
  std::int64_t time_us = 0;  // end of the frame on the bus, microseconds since the Unix epoch
  std::uint32_t id = 0;
  std::uint8_t dlc = 0;
  std::uint8_t label = 0;  // 1 = injected by the attacker
  std::array<std::uint8_t, 8> data{};
};

}  // namespace headroom::synthetic::detail
