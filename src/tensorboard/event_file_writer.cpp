#include "headroom/tensorboard/event_file_writer.hpp"

#include <unistd.h>

#include <boost/crc.hpp>
#include <chrono>
#include <stdexcept>

#include "headroom/util/regular_file.hpp"
#include "tensorboard/compat/proto/event.pb.h"

namespace headroom::tensorboard {
namespace {

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

void append_little_endian(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

}  // namespace

std::uint32_t masked_crc32c(std::string_view data) {
  // CRC-32C (Castagnoli): reflected polynomial 0x1EDC6F41, initial and final XOR all ones.
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(data.data(), data.size());
  const std::uint32_t value = crc.checksum();
  // TFRecord's mask: a CRC of data that holds CRCs is then not a CRC of CRCs.
  return ((value >> 15) | (value << 17)) + 0xa282ead8u;
}

EventFileWriter::EventFileWriter(const std::filesystem::path& directory) {
  std::filesystem::create_directories(directory);
  const auto seconds = static_cast<std::int64_t>(unix_seconds());
  path_ = directory / ("events.out.tfevents." + std::to_string(seconds) + "." + host_name());
  // The name is predictable (seconds and host): a link or a second hard link planted there is
  // refused, never written through.
  out_ = util::open_for_append(path_);
  ::tensorboard::Event version;
  version.set_wall_time(unix_seconds());
  version.set_file_version("brain.Event:2");
  write_record(version.SerializeAsString());
}

void EventFileWriter::add_scalar(const std::string& tag, double value, std::int64_t step,
                                 double wall_time) {
  ::tensorboard::Event event;
  event.set_wall_time(wall_time);
  event.set_step(step);
  auto* summary_value = event.mutable_summary()->add_value();
  summary_value->set_tag(tag);
  summary_value->set_simple_value(static_cast<float>(value));
  write_record(event.SerializeAsString());
}

void EventFileWriter::write_record(std::string_view data) {
  // TFRecord: length (u64), masked CRC of the length bytes (u32), data, masked CRC of data (u32).
  std::string record;
  append_little_endian(record, data.size(), 8);
  append_little_endian(record, masked_crc32c(record), 4);
  record.append(data);
  append_little_endian(record, masked_crc32c(data), 4);
  try {
    util::write_all(out_.get(), record, path_);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(e.what()) + ": cannot write a TensorBoard record");
  }
}

}  // namespace headroom::tensorboard
