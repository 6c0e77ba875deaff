// libFuzzer target: the Parquet reader (timestamp,id,data_field,label) on arbitrary bytes; a
// seed corpus of real Parquet files (scripts/sanitize.sh writes it) gets it past the footer.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = headroom::fuzz::write_scratch_file("input.parquet", std::span(data, size));
  headroom::fuzz::read_every_frame(file, headroom::can::LogFormat::kParquet);
  return 0;
}
