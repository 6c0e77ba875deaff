// One Parquet file read as a stream of record batches of some of its flat columns, with Arrow's
// memory bounded: the shared opening, schema checks and decoding of headroom's Parquet readers
// (CAN logs, graph tables). Every failure is a util::InputError naming the file and, where it is
// known, the 1-based row and the column.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/record_batch.h>
#include <arrow/type.h>

namespace headroom::tabular {

// Arrow and Parquet messages sometimes span lines; InputError messages are one line.
std::string one_line(std::string text);

class ParquetTable {
 public:
  static constexpr std::size_t kDefaultBatchRows = 65536;
  // Arrow's memory while decoding is limited to kDecodeBaseBytes plus kDecodeBytesPerBatchRow
  // per batch row (288 MiB at the default batch), far above what a well-formed file needs (a
  // batch plus one page per column; writers make pages of about 1 MiB). A page whose header
  // claims more, as a corrupt length does, is a decode error instead of a 2 GiB allocation.
  static constexpr std::size_t kDecodeBaseBytes = std::size_t{256} << 20;
  static constexpr std::size_t kDecodeBytesPerBatchRow = 512;

  // Opens `file` and reads its footer. `kind` names what the file should be, for the message
  // when it is a directory ("a CAN log file"). Throws InputError for a missing, empty or
  // unreadable (corrupt, not Parquet) file.
  ParquetTable(std::filesystem::path file, std::string_view kind,
               std::size_t batch_rows = kDefaultBatchRows);
  ~ParquetTable();
  ParquetTable(const ParquetTable&) = delete;
  ParquetTable& operator=(const ParquetTable&) = delete;

  const std::filesystem::path& path() const;
  const arrow::Schema& schema() const;
  std::uint64_t num_rows() const;  // from the footer
  bool has_column(const std::string& name) const;

  // Adds a flat column to those read, checked by `accepts`. Throws InputError naming the column
  // when it is missing (listing the file's columns), nested, or of a type `accepts` refuses
  // (`expected` says what it takes). Call before the first next_batch().
  void read_column(const std::string& name,
                   const std::function<bool(const arrow::DataType&)>& accepts,
                   std::string_view expected);

  // Adds a list column (Arrow list<T>, one level of nesting: a Parquet LIST of one leaf, as
  // pyarrow writes a column of lists), whose element type `accepts_element` takes. A row's
  // elements are the batch column's arrow::ListArray values. Throws InputError naming the column
  // when it is missing, not such a list, or of elements `accepts_element` refuses. Call before the
  // first next_batch().
  void read_list_column(const std::string& name,
                        const std::function<bool(const arrow::DataType&)>& accepts_element,
                        std::string_view expected);

  // The next batch of the columns read (look them up by name: the order is not promised), or
  // nullptr after the last. Throws InputError naming the batch's first row when a page does not
  // decode.
  std::shared_ptr<arrow::RecordBatch> next_batch();
  // Rows of the file before the batch next_batch() returned last.
  std::uint64_t rows_before_batch() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace headroom::tabular
