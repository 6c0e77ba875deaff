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
// after a bad-row InputError the next read() goes on with the following row. Arrow/Parquet types
// stay in the .cpp (they are private to headroom_core). Not thread-safe.
class ParquetFrameReader final : public FrameReader {
 public:
  static constexpr std::size_t kDefaultBatchRows = 65536;
  // Arrow's memory while decoding is limited to kDecodeBaseBytes plus kDecodeBytesPerBatchRow
  // per batch row (288 MiB at the default batch), far above what a well-formed file needs (a
  // batch plus one page per column; writers make pages of about 1 MiB). A page whose header
  // claims more, as a corrupt length does, is a decode error instead of a 2 GiB allocation.
  static constexpr std::size_t kDecodeBaseBytes = std::size_t{256} << 20;
  static constexpr std::size_t kDecodeBytesPerBatchRow = 512;

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

}  // namespace headroom::can
