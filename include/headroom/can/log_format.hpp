// The CAN log formats headroom reads, the column mapping for any other CSV, and the factory that
// opens a reader for a file. The formats are a registry (log_formats()): each is defined beside
// its reader (name, description, extensions, detection, opening) and listed once, in detection
// order, in log_format.cpp; --format's choices, help and errors are generated from it.
//
// Every function here is thread-safe (none keeps state between calls); a reader it returns is
// owned by the caller and used by one thread at a time (see FrameReader).
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/can/frame_reader.hpp"

namespace headroom::can {

// A log format by name, as --format takes it and a store's manifest records it: "auto" (decided
// per file by detect_format()) or a registered format's name. Two values are equal when their
// names are. The constants name the built-in formats; a format added to the registry needs none.
struct LogFormat {
  std::string_view name;  // static storage: "auto" or a registry entry's name

  static const LogFormat kAuto;
  static const LogFormat kCanTrainTest;        // timestamp,arbitration_id,data_field,attack
  static const LogFormat kHcrlCarHacking;      // Timestamp,CAN ID,DLC,DATA[0..DLC-1],Flag
  static const LogFormat kHcrlCarHackingText;  // "Timestamp: ...  ID: 0350  000  DLC: 8  05 28"
  static const LogFormat kParquet;             // timestamp,id,data_field,label[,source_file]
  static const LogFormat kCandump;             // (1436509052.249713) can0 123#DEADBEEF
  static const LogFormat kMappedCsv;           // any CSV described by a CsvColumnMapping

  friend bool operator==(const LogFormat& a, const LogFormat& b) { return a.name == b.name; }
  friend std::ostream& operator<<(std::ostream& out, const LogFormat& format) {
    return out << format.name;
  }
};
inline const LogFormat LogFormat::kAuto{"auto"};
inline const LogFormat LogFormat::kCanTrainTest{"can-train-and-test"};
inline const LogFormat LogFormat::kHcrlCarHacking{"hcrl-car-hacking"};
inline const LogFormat LogFormat::kHcrlCarHackingText{"hcrl-car-hacking-text"};
inline const LogFormat LogFormat::kParquet{"parquet"};
inline const LogFormat LogFormat::kCandump{"candump"};
inline const LogFormat LogFormat::kMappedCsv{"csv"};

// "auto" or a registered format's name (case-insensitive, trimmed); nullopt for any other text.
std::optional<LogFormat> parse_log_format(std::string_view name);
std::string_view log_format_name(LogFormat format);

enum class IdBase { kHex, kDecimal };

// What a DLC column counts: bytes (0..8, the CAN standard) or bits (0..64 in steps of 8, as some
// exporters write it: a full frame is "64").
enum class DlcUnit { kBytes, kBits };

// Describes a CSV that no preset covers. A column is named by its header text (matched trimmed and
// case-insensitively), or, when the file has no header, by its 0-based position written as a
// number ("0", "3"). Fields are trimmed of spaces and tabs; a field may be enclosed in double
// quotes (which lets it hold the delimiter). Blank lines are ignored; "\r\n" line ends are fine.
//
// Rows must have exactly as many columns as the header (fewer by the missing byte count in a
// ragged row); without a header, at least as many as the highest mapped position needs.
struct CsvColumnMapping {
  char delimiter = ',';
  bool has_header = true;
  std::string timestamp;          // seconds; empty: the 0-based data row index is used
  std::string id;                 // required
  IdBase id_base = IdBase::kHex;  // "0x" prefixes are accepted in hex columns
  // One hex string column ("DEADBEEF", "de ad be ef"; empty = no payload). With `dlc`, the
  // payload must have exactly DLC bytes.
  std::string payload;
  // Or: one column per byte, hex ("0f", "F", "0x0f"). Without `dlc` the payload ends at the first
  // empty byte column.
  std::vector<std::string> payload_bytes;
  std::string dlc;  // optional, decimal 0..8; with payload_bytes, the bytes to read
  // The DLC column's unit. In bits a value must be a multiple of 8 up to 64. Left at bytes, a
  // value such as 64 is a bad row whose reason suggests bits (never guessed: a "8" reads as 8
  // bytes or 1, so one file's rows cannot tell the unit).
  DlcUnit dlc_unit = DlcUnit::kBytes;
  // HCRL style: a row with DLC < payload_bytes.size() has fewer byte columns and every later
  // column (the label) moves left by the missing count. Needs `dlc`.
  bool ragged_payload = false;
  std::string label;                               // empty: every frame is normal
  std::vector<std::string> attack_values = {"1"};  // label texts meaning attack, case-insensitive
  // Label texts meaning normal, case-insensitive. Empty: every label that is not an attack value
  // is normal. Non-empty: a label in neither set makes the row bad.
  std::vector<std::string> normal_values;

  // Throws std::invalid_argument naming the inconsistent field (a missing id, no or two payload
  // sources, more than 8 byte columns, a ragged payload without dlc, a DLC unit of bits without a
  // dlc column, a non-numeric position when has_header is false, a quote or line break as
  // delimiter, overlapping label values).
  void validate() const;
};

// The mappings of the two CSV presets (for reuse and for the docs). can-train-and-test: attack
// "1", normal "0". HCRL: ragged DATA[i] byte columns, Flag "T" attack, "R" normal; without a
// header the columns are positions 0..11.
CsvColumnMapping can_train_test_mapping();
CsvColumnMapping hcrl_car_hacking_mapping(bool has_header);

struct ReaderOptions {
  LogFormat format = LogFormat::kAuto;
  CsvColumnMapping mapping;  // used when format == kMappedCsv
  BadRowPolicy on_bad_row = BadRowPolicy::kError;
  // Text formats read the file in blocks of this many bytes (the buffer only grows past it for a
  // line longer than a block, up to 16 MiB). Tests shrink it to exercise block boundaries.
  std::size_t block_bytes = std::size_t{1} << 20;
  // Parquet is decoded in record batches of at most this many rows.
  std::size_t parquet_batch_rows = 65536;
};

// A registered format: what --format names, how a file is recognised and how it is read. Defined
// beside its reader (`candump_log_format()` in candump_frame_reader.cpp is an example) and listed
// once in log_format.cpp's table, whose order is the order detection tries.
struct LogFormatDefinition {
  std::string_view name{};         // --format's value and the manifest's
  std::string_view description{};  // one line, for --help
  // The extensions (lower case, with the dot) a dataset scan picks up for this format.
  std::span<const std::string_view> extensions{};
  // The extension alone decides (a binary format, whose first line means nothing).
  bool detected_by_extension = false;
  // A text format recognised by its first non-blank line (trimmed); null: named only.
  bool (*matches_first_line)(std::string_view line) = nullptr;
  // Opens a reader for `file`; the header, schema or column mapping is checked here.
  std::unique_ptr<FrameReader> (*open)(const std::filesystem::path& file,
                                       const ReaderOptions& options) = nullptr;
};

// The registered formats, in detection order.
std::span<const LogFormatDefinition* const> log_formats();
// The definition of `format`, or null for "auto" and names not registered.
const LogFormatDefinition* find_log_format(LogFormat format);
// "auto" and every registered name: --format's choices.
std::vector<std::string> log_format_choices();

// Decides the format from the extension and the first line. Throws InputError when the file
// cannot be read or matches no known format (the message suggests --format / a mapping).
LogFormat detect_format(const std::filesystem::path& file);

// Opens a streaming reader; a CSV header is read and checked here, a Parquet schema too. Throws
// InputError for a missing, empty or unreadable file, an unknown format (kAuto), a mapped column
// missing from the header or schema; std::invalid_argument for an inconsistent mapping
// (kMappedCsv). A candump log and HCRL's attack-free text file are unlabelled: every frame is
// normal; a CAN FD frame is a bad row.
std::unique_ptr<FrameReader> open_frame_reader(const std::filesystem::path& file,
                                               const ReaderOptions& options);

// True for the file extensions a dataset scan picks up (.csv, .parquet, .log, .txt).
bool is_can_log_file(const std::filesystem::path& file);

}  // namespace headroom::can
