#include "headroom/can/parquet_frame_reader.hpp"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "headroom/can/hex.hpp"
#include "headroom/can/log_format.hpp"
#include "headroom/tabular/arrow_columns.hpp"
#include "headroom/tabular/parquet_table.hpp"
#include "headroom/util/input_error.hpp"

namespace headroom::can {
namespace {

constexpr const char* kTimestamp = "timestamp";
constexpr const char* kId = "id";
constexpr const char* kData = "data_field";
constexpr const char* kLabel = "label";

}  // namespace

struct ParquetFrameReader::Impl {
  Impl(std::filesystem::path file, BadRowPolicy bad_rows, std::size_t batch_rows)
      : table(std::move(file), "a CAN log file", batch_rows), policy(bad_rows) {}

  tabular::ParquetTable table;
  BadRowPolicy policy = BadRowPolicy::kError;
  std::shared_ptr<arrow::RecordBatch> batch;
  std::int64_t position = 0;  // next row within `batch`
  std::uint64_t skipped = 0;
  bool finished = false;

  tabular::NumberColumn timestamp;
  tabular::IntegerColumn id;
  tabular::StringColumn data;
  tabular::IntegerColumn label;

  std::string error_column;
  std::string error_reason;

  void check_schema();
  bool next_batch();
  bool parse_row(std::int64_t row, CanFrame& frame);
  bool fail(const char* column, std::string reason) {
    error_column = column;
    error_reason = std::move(reason);
    return false;
  }
};

void ParquetFrameReader::Impl::check_schema() {
  table.read_column(
      kTimestamp, [](const arrow::DataType& t) { return tabular::NumberColumn::accepts(t, false); },
      "double or float");
  table.read_column(
      kId, [](const arrow::DataType& t) { return tabular::IntegerColumn::accepts(t, false); },
      "an integer type");
  table.read_column(
      kData, [](const arrow::DataType& t) { return tabular::StringColumn::accepts(t); },
      "string (hex payload)");
  table.read_column(
      kLabel, [](const arrow::DataType& t) { return tabular::IntegerColumn::accepts(t, true); },
      "an integer type (1 = attack, 0 = normal)");
}

bool ParquetFrameReader::Impl::next_batch() {
  if (finished) return false;
  position = 0;
  batch = table.next_batch();
  if (batch == nullptr) {
    finished = true;
    return false;
  }
  // Looked up by name: the batch's column order is not promised to follow the request.
  timestamp.bind(*batch->GetColumnByName(kTimestamp));
  id.bind(*batch->GetColumnByName(kId));
  data.bind(*batch->GetColumnByName(kData));
  label.bind(*batch->GetColumnByName(kLabel));
  return true;
}

bool ParquetFrameReader::Impl::parse_row(std::int64_t row, CanFrame& frame) {
  frame = CanFrame{};
  if (timestamp.is_null(row)) return fail(kTimestamp, "timestamp is null");
  frame.timestamp_s = timestamp.value(row);
  if (!std::isfinite(frame.timestamp_s)) {
    return fail(kTimestamp, fmt::format("timestamp {} is not a finite number", frame.timestamp_s));
  }
  if (!plausible_timestamp(frame.timestamp_s))
    return fail(kTimestamp, implausible_timestamp_reason(fmt::format("{}", frame.timestamp_s)));

  if (id.is_null(row)) return fail(kId, "ID is null");
  const std::int64_t id_value = id.value(row);
  if (id_value < 0) return fail(kId, fmt::format("ID {} is negative", id_value));
  if (id_value > static_cast<std::int64_t>(kMaxCanId)) {
    return fail(kId, fmt::format("ID {} exceeds 29 bits", id_value));
  }
  frame.id = static_cast<std::uint32_t>(id_value);

  if (data.is_null(row)) return fail(kData, "payload is null");
  const HexPayloadResult result = decode_hex_payload(data.value(row), frame.data, ' ');
  if (result.error != HexPayloadError::kNone) {
    return fail(kData, describe_hex_payload_error(result, "payload"));
  }
  frame.dlc = result.bytes;

  if (label.is_null(row)) return fail(kLabel, "label is null");
  const std::int64_t label_value = label.value(row);
  if (label_value != 0 && label_value != 1) {
    return fail(kLabel, fmt::format("label {} is neither attack (1) nor normal (0)", label_value));
  }
  frame.label = static_cast<std::uint8_t>(label_value);
  return true;
}

ParquetFrameReader::ParquetFrameReader(std::filesystem::path file, BadRowPolicy policy,
                                       std::size_t batch_rows)
    : impl_(std::make_unique<Impl>(std::move(file), policy, batch_rows)) {
  impl_->check_schema();
}

ParquetFrameReader::~ParquetFrameReader() = default;

std::size_t ParquetFrameReader::read(std::span<CanFrame> out) {
  Impl& s = *impl_;
  std::size_t n = 0;
  const auto row_number = [&](std::int64_t row) {
    return s.table.rows_before_batch() + static_cast<std::uint64_t>(row) + 1;
  };
  try {
    while (n < out.size()) {
      if (s.batch == nullptr || s.position == s.batch->num_rows()) {
        if (!s.next_batch()) break;
        continue;
      }
      const std::int64_t row = s.position++;
      if (s.parse_row(row, out[n])) {
        ++n;
        continue;
      }
      if (s.policy == BadRowPolicy::kError) {
        throw util::InputError(path(), row_number(row), s.error_column, s.error_reason);
      }
      ++s.skipped;
    }
  } catch (const util::InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw util::InputError(
        path(), row_number(s.position), "",
        tabular::one_line(std::string("cannot decode Parquet data: ") + e.what()));
  }
  return n;
}

std::uint64_t ParquetFrameReader::skipped_rows() const { return impl_->skipped; }

const std::filesystem::path& ParquetFrameReader::path() const { return impl_->table.path(); }

std::uint64_t ParquetFrameReader::num_rows() const { return impl_->table.num_rows(); }

namespace {

std::unique_ptr<FrameReader> open_parquet(const std::filesystem::path& file,
                                          const ReaderOptions& options) {
  return std::make_unique<ParquetFrameReader>(file, options.on_bad_row, options.parquet_batch_rows);
}

constexpr std::string_view kParquetExtensions[] = {".parquet"};

}  // namespace

const LogFormatDefinition& parquet_log_format() {
  static const LogFormatDefinition definition{
      .name = "parquet",
      .description = "Parquet with columns timestamp, id, data_field, label[, source_file]",
      .extensions = kParquetExtensions,
      .detected_by_extension = true,
      .open = &open_parquet};
  return definition;
}
}  // namespace headroom::can
