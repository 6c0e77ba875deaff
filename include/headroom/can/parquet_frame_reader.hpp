// Reader for Parquet CAN logs: timestamp (double), id (integer), data_field (hex string),
// label (integer, 1 = attack, 0 = normal); other columns (source_file) are not read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

#include "headroom/can/frame_reader.hpp"

namespace headroom::can {

// Decodes record batches of at most `batch_rows` rows, so memory is bounded by a batch (plus the
// Parquet page buffers), not by the file. Any integer type is accepted for id and label (bool too
// for label), float or double for timestamp, string or large_string for data_field. The error
// "line" of a bad row is its 1-based row number in the file, its column the Parquet column name;
// after a bad-row InputError the next read() goes on with the following row. Arrow's memory is
// bounded as tabular::ParquetTable bounds it. Arrow/Parquet types stay in the .cpp. Not
// thread-safe.
class ParquetFrameReader final : public FrameReader {
 public:
  static constexpr std::size_t kDefaultBatchRows = 65536;

  // Opens the file and checks its schema. Throws InputError for a missing, empty or unreadable
  // (corrupt, not Parquet) file, and for a missing or mistyped column (naming the column).
  ParquetFrameReader(std::filesystem::path file, BadRowPolicy policy,
                     std::size_t batch_rows = kDefaultBatchRows);
  ~ParquetFrameReader() override;
  ParquetFrameReader(const ParquetFrameReader&) = delete;
  ParquetFrameReader& operator=(const ParquetFrameReader&) = delete;

  std::size_t read(std::span<CanFrame> out) override;
  std::uint64_t skipped_rows() const override;
  const std::filesystem::path& path() const override;

  // Rows in the file according to its footer (bad rows included).
  std::uint64_t num_rows() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct LogFormatDefinition;  // log_format.hpp

// The `parquet` entry of the format registry (log_format.hpp).
const LogFormatDefinition& parquet_log_format();

}  // namespace headroom::can
