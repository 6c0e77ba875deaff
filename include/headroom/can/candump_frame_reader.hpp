// Reader for candump output in both layouts: the log file (candump -l / -L),
//   "(1436509052.249713) can0 123#DEADBEEF"
// and the screen format (candump's default, with or without -ta/-td/-tz timestamps, -a ASCII),
//   "(1436509052.249713)  can0  1F334455   [8]  11 22 33 44 55 66 77 88"
//   "  can0  123   [2]  DE AD"            (no timestamp: timestamp_s is 0; graphs do not use it)
//   "  can0  7FF   [1]  remote request"   (a remote frame: dlc 0)
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "headroom/can/frame_reader.hpp"
#include "headroom/can/line_source.hpp"

namespace headroom::can {

// candump logs carry no labels: every frame is normal. Accepted per line: "(seconds) interface
// frame" with an optional trailing direction token (T/R); frame is ID#DATA with 1..8 hex ID digits
// (11- or 29-bit), up to 8 payload bytes (optionally '.'-separated, optionally a "_L" len8_dlc
// suffix) or ID#R[len] for a remote frame (dlc 0). A CAN FD frame (ID##...) is a bad row with the
// reason "CAN FD frames are not supported" (in the screen layout: a two-digit length "[08]").
// The layout is decided per line. Blank lines are ignored. Error columns are "timestamp",
// "interface", "frame", "id" or "data". After a bad-row InputError the next read() goes on with
// the following line. Not thread-safe.
class CandumpFrameReader final : public FrameReader {
 public:
  // Throws InputError for a missing or empty file.
  CandumpFrameReader(std::filesystem::path file, BadRowPolicy policy,
                     std::size_t block_bytes = LineSource::kDefaultBlockBytes);

  std::size_t read(std::span<CanFrame> out) override;
  std::uint64_t skipped_rows() const override { return skipped_; }
  const std::filesystem::path& path() const override { return lines_.path(); }

 private:
  bool parse_line(std::string_view line, CanFrame& frame);
  bool parse_frame(std::string_view text, CanFrame& frame);
  bool parse_id(std::string_view id_text, CanFrame& frame);
  // The screen layout after the interface: the ID, then "[n]" and n bytes, or "remote request".
  bool parse_screen_frame(std::string_view id_text, std::string_view rest, CanFrame& frame);
  bool fail(std::string_view column, std::string reason);

  LineSource lines_;
  BadRowPolicy policy_;
  std::uint64_t skipped_ = 0;
  std::string error_column_;
  std::string error_reason_;
};

struct LogFormatDefinition;  // log_format.hpp

// The `candump` entry of the format registry (log_format.hpp).
const LogFormatDefinition& candump_log_format();

}  // namespace headroom::can
