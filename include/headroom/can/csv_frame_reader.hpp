// The one CSV engine: reads any delimited text log described by a CsvColumnMapping, the
// can-train-and-test and HCRL presets included.
#pragma once

#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/can/frame_reader.hpp"
#include "headroom/can/line_source.hpp"
#include "headroom/can/log_format.hpp"

namespace headroom::can {

// Parses rows in place from the LineSource buffer (std::from_chars, no allocation per row). Error
// line numbers are physical 1-based lines; the column is the header text, or the position when the
// file has no header (empty for a wrong column count). After a bad-row InputError the next read()
// goes on with the following line. Not thread-safe.
class CsvFrameReader final : public FrameReader {
 public:
  // Validates `mapping` (std::invalid_argument), opens the file and, when it has a header, reads
  // and resolves it. Throws InputError for a missing/empty file, a file with no header line, or a
  // mapped column absent from the header.
  CsvFrameReader(std::filesystem::path file, CsvColumnMapping mapping, BadRowPolicy policy,
                 std::size_t block_bytes = LineSource::kDefaultBlockBytes);

  std::size_t read(std::span<CanFrame> out) override;
  std::uint64_t skipped_rows() const override { return skipped_; }
  const std::filesystem::path& path() const override { return lines_.path(); }

 private:
  struct Column {
    int index = -1;    // position in a row (before any ragged shift); -1: not mapped
    std::string name;  // as the header writes it, or the position: used in error messages
  };

  void resolve_columns(const std::vector<std::string>& header, std::uint64_t header_line);
  Column resolve(const std::string& wanted, const std::vector<std::string>& header,
                 std::uint64_t header_line) const;
  // Splits `line` into fields_, trimmed and unquoted; false (error set) on a broken quote.
  bool split(std::string_view line);
  bool parse_row(std::string_view line, CanFrame& frame);
  // The row's DLC in bytes into `dlc` (left at -1 without a DLC column); false (error set) when
  // the field is missing, not a number or out of range for the mapping's unit.
  bool parse_dlc(int& dlc);
  // The parts of a row, each false (error set) when its field is bad. `missing` is the number of
  // byte columns a ragged row leaves out (0 otherwise); fields past them sit that far left.
  // Inline: defined in csv_frame_reader.cpp, their only user, and folded into parse_row there.
  inline bool check_width(int dlc, int missing);
  inline std::string_view field(const Column& column, int missing) const;
  inline bool parse_timestamp(std::string_view text, double& timestamp_s);
  inline bool parse_id(std::string_view text, std::uint32_t& can_id);
  inline bool parse_payload(std::string_view text, int dlc, CanFrame& frame);  // one hex string
  inline bool parse_payload_bytes(int dlc, int missing, CanFrame& frame);  // one column per byte
  inline bool parse_label(std::string_view text, std::uint8_t& label);
  bool fail(const Column& column, std::string reason);
  bool fail(std::string column, std::string reason);
  std::string field_name(std::size_t position) const;
  bool label_in(std::string_view text, const std::vector<std::string>& values) const;

  LineSource lines_;
  CsvColumnMapping mapping_;
  BadRowPolicy policy_;

  Column timestamp_, id_, payload_, dlc_, label_;
  std::array<Column, kMaxPayloadBytes> bytes_;
  std::size_t byte_columns_ = 0;
  int ragged_after_ = INT_MAX;    // ragged rows shift columns past this position left
  std::size_t header_width_ = 0;  // 0 without a header
  std::size_t min_width_ = 0;     // columns a full (non-ragged) row needs
  std::vector<std::string> header_;
  std::string attack_text_, normal_text_;  // for error messages

  std::vector<std::string_view> fields_;  // reused: capacity survives between rows
  std::uint64_t data_rows_ = 0;
  std::uint64_t skipped_ = 0;
  std::string error_column_;
  std::string error_reason_;
};

// The registry's CSV entries (log_format.hpp): the `can-train-and-test` and `hcrl-car-hacking`
// presets, and `csv`, read by ReaderOptions::mapping.
const LogFormatDefinition& can_train_test_log_format();
const LogFormatDefinition& hcrl_csv_log_format();
const LogFormatDefinition& mapped_csv_log_format();

}  // namespace headroom::can
