// Reader for the text layout of the HCRL Car-Hacking dataset's attack-free recording
// (normal_run_data.txt), one frame per line, fields aligned with spaces:
//   "Timestamp: 1479121434.850202        ID: 0350    000    DLC: 8    05 28 84 66 6d 00 00 a2"
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

// The file carries no labels: it is the dataset's attack-free recording, so every frame is normal.
// Accepted per line: "Timestamp:" seconds, "ID:" 1..8 hex digits (11- or 29-bit), an optional
// hex flags field (always "000" in the published file; read and not used), "DLC:" 0..8, then DLC
// bytes of two hex digits each. The labels are matched case-insensitively, with or without a
// space after the colon. Blank lines are ignored. Error columns are "timestamp", "id", "flags",
// "dlc" or "data". After a bad-row InputError the next read() goes on with the following line.
// Not thread-safe.
class HcrlTextFrameReader final : public FrameReader {
 public:
  // Throws InputError for a missing or empty file.
  HcrlTextFrameReader(std::filesystem::path file, BadRowPolicy policy,
                      std::size_t block_bytes = LineSource::kDefaultBlockBytes);

  std::size_t read(std::span<CanFrame> out) override;
  std::uint64_t skipped_rows() const override { return skipped_; }
  const std::filesystem::path& path() const override { return lines_.path(); }

 private:
  bool parse_line(std::string_view line, CanFrame& frame);
  bool parse_timestamp(std::string_view& rest, CanFrame& frame);
  bool parse_id(std::string_view& rest, CanFrame& frame);
  // The optional flags field, then "DLC:" and the payload bytes.
  bool parse_payload(std::string_view& rest, CanFrame& frame);
  bool fail(std::string_view column, std::string reason);

  LineSource lines_;
  BadRowPolicy policy_;
  std::uint64_t skipped_ = 0;
  std::string error_column_;
  std::string error_reason_;
};

struct LogFormatDefinition;  // log_format.hpp

// The `hcrl-car-hacking-text` entry of the format registry (log_format.hpp).
const LogFormatDefinition& hcrl_text_log_format();

}  // namespace headroom::can
