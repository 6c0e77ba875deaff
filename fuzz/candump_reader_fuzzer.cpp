// libFuzzer target: the candump reader (-l log lines and the screen layout) on arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = headroom::fuzz::write_scratch_file("input.log", std::span(data, size));
  headroom::fuzz::read_every_frame(file, headroom::can::LogFormat::kCandump);
  return 0;
}
