// The CAN log formats headroom reads, the column mapping for any other CSV, and the factory that
// opens a reader for a file.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/can/frame_reader.hpp"

namespace headroom::can {

enum class LogFormat {
  kAuto,            // decided per file by detect_format()
  kCanTrainTest,    // can-train-and-test / KD-GAT CSV: timestamp,arbitration_id,data_field,attack
  kHcrlCarHacking,  // HCRL Car-Hacking CSV: Timestamp,CAN ID,DLC,DATA[0..DLC-1],Flag (T/R)
  kParquet,         // Parquet: timestamp,id,data_field,label[,source_file]
  kCandump,         // candump -l log: (1436509052.249713) can0 123#DEADBEEF (unlabelled)
  kMappedCsv,       // any CSV described by a CsvColumnMapping
};

// Parses "auto", "can-train-and-test", "hcrl-car-hacking", "parquet", "candump", "csv".
std::optional<LogFormat> parse_log_format(std::string_view name);
std::string_view log_format_name(LogFormat format);

enum class IdBase { kHex, kDecimal };

// Describes a CSV that no preset covers. A column is named by its header text, or, when the file
// has no header, by its 0-based position written as a number ("0", "3").
struct CsvColumnMapping {
  char delimiter = ',';
  bool has_header = true;
  std::string timestamp;                   // seconds; empty: the row number is used
  std::string id;                          // required
  IdBase id_base = IdBase::kHex;           // "0x" prefixes are accepted in hex columns
  std::string payload;                     // one hex string column ("DEADBEEF", "de ad be ef")
  std::vector<std::string> payload_bytes;  // or: one column per byte, hex ("0f")
  std::string dlc;                         // optional; with payload_bytes, the bytes to read
  // HCRL style: a row with DLC < payload_bytes.size() has fewer byte columns and every later
  // column (the label) moves left by the missing count. Needs `dlc`.
  bool ragged_payload = false;
  std::string label;                       // empty: every frame is normal
  std::vector<std::string> attack_values = {"1"};  // label texts meaning attack, case-insensitive

  // Throws std::invalid_argument naming the inconsistent field.
  void validate() const;
};

// The mappings of the two CSV presets (for reuse and for the docs).
CsvColumnMapping can_train_test_mapping();
CsvColumnMapping hcrl_car_hacking_mapping(bool has_header);

struct ReaderOptions {
  LogFormat format = LogFormat::kAuto;
  CsvColumnMapping mapping;  // used when format == kMappedCsv
  BadRowPolicy on_bad_row = BadRowPolicy::kError;
};

// Decides the format from the extension and the first line. Throws InputError when the file
// cannot be read or matches no known format (the message suggests --format / a mapping).
LogFormat detect_format(const std::filesystem::path& file);

// Opens a streaming reader. Throws InputError for a missing, empty or unreadable file.
std::unique_ptr<FrameReader> open_frame_reader(const std::filesystem::path& file,
                                               const ReaderOptions& options);

// True for the file extensions a dataset scan picks up (.csv, .parquet, .log, .txt).
bool is_can_log_file(const std::filesystem::path& file);

}  // namespace headroom::can
