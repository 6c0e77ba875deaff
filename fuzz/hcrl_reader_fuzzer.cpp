// libFuzzer target: the HCRL Car-Hacking CSV reader (Timestamp,CAN ID,DLC,DATA[0..DLC-1],Flag,
// ragged rows) on arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = headroom::fuzz::write_scratch_file("input.csv", std::span(data, size));
  headroom::fuzz::read_every_frame(file, headroom::can::LogFormat::kHcrlCarHacking);
  return 0;
}
