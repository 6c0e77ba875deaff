// libFuzzer target: the CSV readers on arbitrary bytes — the can-train-and-test preset, format
// detection (kAuto, which may pick any text format), and a column mapping with quoted fields,
// decimal IDs and one column per payload byte.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fuzz_support.hpp"
#include "headroom/util/input_error.hpp"

namespace {

headroom::can::CsvColumnMapping byte_column_mapping() {
  headroom::can::CsvColumnMapping mapping;
  mapping.delimiter = ';';
  mapping.timestamp = "time";
  mapping.id = "id";
  mapping.id_base = headroom::can::IdBase::kDecimal;
  mapping.payload_bytes = {"b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7"};
  mapping.dlc = "dlc";
  mapping.label = "class";
  mapping.attack_values = {"attack", "1"};
  mapping.normal_values = {"normal", "0"};
  return mapping;
}

void read_mapped(const std::filesystem::path& file) {
  headroom::can::ReaderOptions options;
  options.format = headroom::can::LogFormat::kMappedCsv;
  options.mapping = byte_column_mapping();
  options.block_bytes = 16;
  try {
    auto reader = headroom::can::open_frame_reader(file, options);
    std::vector<headroom::can::CanFrame> frames(5);
    while (reader->read(frames) != 0) {
    }
  } catch (const headroom::util::InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = headroom::fuzz::write_scratch_file("input.csv", std::span(data, size));
  headroom::fuzz::read_every_frame(file, headroom::can::LogFormat::kCanTrainTest);
  headroom::fuzz::read_every_frame(file, headroom::can::LogFormat::kAuto);
  read_mapped(file);
  return 0;
}
