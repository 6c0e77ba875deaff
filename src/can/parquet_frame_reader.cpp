#include "headroom/can/parquet_frame_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <sys/stat.h>

#include <arrow/array.h>
#include <arrow/io/file.h>
#include <arrow/memory_pool.h>
#include <arrow/record_batch.h>
#include <arrow/status.h>
#include <arrow/type.h>
#include <arrow/type_traits.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <parquet/arrow/reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/properties.h>
#include <parquet/schema.h>

#include "headroom/can/hex.hpp"
#include "headroom/can/input_error.hpp"

namespace headroom::can {
namespace {

constexpr const char* kTimestamp = "timestamp";
constexpr const char* kId = "id";
constexpr const char* kData = "data_field";
constexpr const char* kLabel = "label";

// Arrow and Parquet messages sometimes span lines; InputError messages are one line.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

// Arrow's memory for one reader, refused past a limit. Parquet page headers carry the page's
// uncompressed size, and Arrow allocates that much before it finds out whether the page really
// decompresses to it: a corrupt length would have it reserve up to 2 GiB per page (mimalloc, so
// neither a sanitizer nor the budget sees it). Refusing the allocation turns that into a decode
// error naming the file and row. Not thread-safe on its own; the reader runs without threads.
class LimitedMemoryPool final : public arrow::MemoryPool {
 public:
  explicit LimitedMemoryPool(std::int64_t limit_bytes)
      : pool_(arrow::default_memory_pool()), limit_bytes_(limit_bytes) {}

  using arrow::MemoryPool::Allocate;
  using arrow::MemoryPool::Free;
  using arrow::MemoryPool::Reallocate;

  arrow::Status Allocate(std::int64_t size, std::int64_t alignment, std::uint8_t** out) override {
    if (auto refused = over_limit(size); !refused.ok()) return refused;
    auto status = pool_->Allocate(size, alignment, out);
    if (status.ok()) held_ += size;
    return status;
  }
  arrow::Status Reallocate(std::int64_t old_size, std::int64_t new_size, std::int64_t alignment,
                           std::uint8_t** ptr) override {
    if (auto refused = over_limit(new_size - old_size); !refused.ok()) return refused;
    auto status = pool_->Reallocate(old_size, new_size, alignment, ptr);
    if (status.ok()) held_ += new_size - old_size;
    return status;
  }
  void Free(std::uint8_t* buffer, std::int64_t size, std::int64_t alignment) override {
    pool_->Free(buffer, size, alignment);
    held_ -= size;
  }
  std::int64_t bytes_allocated() const override { return held_; }
  std::int64_t total_bytes_allocated() const override { return pool_->total_bytes_allocated(); }
  std::int64_t num_allocations() const override { return pool_->num_allocations(); }
  std::string backend_name() const override { return pool_->backend_name(); }

 private:
  arrow::Status over_limit(std::int64_t more) const {
    if (more <= 0 || held_ + more <= limit_bytes_) return arrow::Status::OK();
    constexpr double kMiB = 1024.0 * 1024.0;
    return arrow::Status::OutOfMemory(fmt::format(
        "a page or batch would take Arrow's memory to {:.0f} MiB, over the reader's limit of "
        "{:.0f} MiB (a corrupt page length, or pages far larger than Parquet writers make; "
        "rewrite the file with smaller pages or row groups)",
        static_cast<double>(held_ + more) / kMiB, static_cast<double>(limit_bytes_) / kMiB));
  }

  arrow::MemoryPool* pool_;
  std::int64_t limit_bytes_;
  std::int64_t held_ = 0;
};

std::int64_t decode_limit_bytes(std::size_t batch_rows) {
  const std::size_t rows = std::min<std::size_t>(batch_rows, std::size_t{1} << 32);
  return static_cast<std::int64_t>(ParquetFrameReader::kDecodeBaseBytes +
                                   rows * ParquetFrameReader::kDecodeBytesPerBatchRow);
}

// Reads a value of any integer (or, for labels, boolean) column as int64, whatever its width.
class IntegerColumn {
 public:
  static bool accepts(const arrow::DataType& type, bool allow_bool) {
    return arrow::is_integer(type.id()) || (allow_bool && type.id() == arrow::Type::BOOL);
  }

  void bind(const arrow::Array& array) {
    array_ = &array;
    type_ = array.type_id();
    values_ = nullptr;
    if (type_ != arrow::Type::BOOL && array.data()->buffers.size() > 1 &&
        array.data()->buffers[1] != nullptr) {
      const auto width = static_cast<std::size_t>(
          static_cast<const arrow::FixedWidthType&>(*array.type()).bit_width() / 8);
      values_ = array.data()->buffers[1]->data() + static_cast<std::size_t>(array.offset()) * width;
    }
  }

  bool is_null(std::int64_t row) const { return array_->IsNull(row); }

  // Unsigned 64-bit values past INT64_MAX saturate; every caller range-checks the result.
  std::int64_t value(std::int64_t row) const {
    switch (type_) {
      case arrow::Type::INT8:
        return load<std::int8_t>(row);
      case arrow::Type::INT16:
        return load<std::int16_t>(row);
      case arrow::Type::INT32:
        return load<std::int32_t>(row);
      case arrow::Type::INT64:
        return load<std::int64_t>(row);
      case arrow::Type::UINT8:
        return load<std::uint8_t>(row);
      case arrow::Type::UINT16:
        return load<std::uint16_t>(row);
      case arrow::Type::UINT32:
        return load<std::uint32_t>(row);
      case arrow::Type::UINT64: {
        const auto v = load<std::uint64_t>(row);
        return v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                   ? std::numeric_limits<std::int64_t>::max()
                   : static_cast<std::int64_t>(v);
      }
      case arrow::Type::BOOL:
        return static_cast<const arrow::BooleanArray*>(array_)->Value(row) ? 1 : 0;
      default:
        return 0;  // excluded by accepts() when the schema is checked
    }
  }

 private:
  template <typename T>
  T load(std::int64_t row) const {
    T v;
    std::memcpy(&v, values_ + static_cast<std::size_t>(row) * sizeof(T), sizeof(T));
    return v;
  }

  const arrow::Array* array_ = nullptr;
  arrow::Type::type type_ = arrow::Type::NA;
  const std::uint8_t* values_ = nullptr;
};

class TimestampColumn {
 public:
  static bool accepts(const arrow::DataType& type) {
    return type.id() == arrow::Type::DOUBLE || type.id() == arrow::Type::FLOAT;
  }
  void bind(const arrow::Array& array) { array_ = &array; }
  bool is_null(std::int64_t row) const { return array_->IsNull(row); }
  double value(std::int64_t row) const {
    if (array_->type_id() == arrow::Type::DOUBLE) {
      return static_cast<const arrow::DoubleArray*>(array_)->Value(row);
    }
    return static_cast<const arrow::FloatArray*>(array_)->Value(row);
  }

 private:
  const arrow::Array* array_ = nullptr;
};

class StringColumn {
 public:
  static bool accepts(const arrow::DataType& type) {
    return type.id() == arrow::Type::STRING || type.id() == arrow::Type::LARGE_STRING;
  }
  void bind(const arrow::Array& array) { array_ = &array; }
  bool is_null(std::int64_t row) const { return array_->IsNull(row); }
  std::string_view value(std::int64_t row) const {
    if (array_->type_id() == arrow::Type::STRING) {
      return static_cast<const arrow::StringArray*>(array_)->GetView(row);
    }
    return static_cast<const arrow::LargeStringArray*>(array_)->GetView(row);
  }

 private:
  const arrow::Array* array_ = nullptr;
};

}  // namespace

struct ParquetFrameReader::Impl {
  std::filesystem::path path;
  // Declared before the readers that allocate from it, so it outlives them.
  std::unique_ptr<LimitedMemoryPool> memory;
  BadRowPolicy policy = BadRowPolicy::kError;
  std::unique_ptr<parquet::arrow::FileReader> file_reader;
  std::unique_ptr<arrow::RecordBatchReader> batches;
  std::shared_ptr<arrow::RecordBatch> batch;
  std::int64_t position = 0;   // next row within `batch`
  std::uint64_t row_base = 0;  // rows in the batches before `batch`
  std::uint64_t num_rows = 0;
  std::uint64_t skipped = 0;
  bool finished = false;

  TimestampColumn timestamp;
  IntegerColumn id;
  StringColumn data;
  IntegerColumn label;

  std::string error_column;
  std::string error_reason;

  [[noreturn]] void unreadable(const std::string& why) const {
    throw InputError(path, 0, "", one_line("not a readable Parquet file: " + why));
  }

  void open(std::size_t batch_rows);
  bool next_batch();
  bool parse_row(std::int64_t row, CanFrame& frame);
  bool fail(const char* column, std::string reason) {
    error_column = column;
    error_reason = std::move(reason);
    return false;
  }
};

void ParquetFrameReader::Impl::open(std::size_t batch_rows) {
  // Checked up front: Arrow's own messages for these cases are long and platform-flavoured.
  // (POSIX stat rather than std::filesystem: the LibTorch wheel exports its own copies of the
  // std::filesystem operations, and they must not be on the reading path.)
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    throw InputError(path, 0, "", fmt::format("cannot open file: {}", std::strerror(errno)));
  }
  if (S_ISDIR(info.st_mode)) throw InputError(path, 0, "", "is a directory, not a CAN log file");
  if (S_ISREG(info.st_mode) && info.st_size == 0) {
    throw InputError(path, 0, "", "file is empty (0 bytes)");
  }

  auto file = arrow::io::ReadableFile::Open(path.string());
  if (!file.ok())
    throw InputError(path, 0, "", one_line("cannot open file: " + file.status().message()));

  // Buffered column reads and no pre-buffering keep memory at a page buffer per column instead of
  // a whole row group.
  memory = std::make_unique<LimitedMemoryPool>(decode_limit_bytes(batch_rows));
  parquet::ReaderProperties properties(memory.get());
  properties.enable_buffered_stream();
  properties.set_buffer_size(std::int64_t{1} << 20);
  parquet::ArrowReaderProperties arrow_properties;
  arrow_properties.set_batch_size(static_cast<std::int64_t>(std::max<std::size_t>(batch_rows, 1)));
  arrow_properties.set_pre_buffer(false);
  arrow_properties.set_use_threads(false);

  parquet::arrow::FileReaderBuilder builder;
  if (auto st = builder.Open(*file, properties); !st.ok()) unreadable(st.message());
  builder.memory_pool(memory.get());
  builder.properties(arrow_properties);
  auto built = builder.Build();
  if (!built.ok()) unreadable(built.status().message());
  file_reader = std::move(*built);

  std::shared_ptr<arrow::Schema> schema;
  if (auto st = file_reader->GetSchema(&schema); !st.ok()) unreadable(st.message());
  const auto metadata = file_reader->parquet_reader()->metadata();
  num_rows = static_cast<std::uint64_t>(metadata->num_rows());

  std::vector<int> leaves;
  const auto check = [&](const char* name, auto&& accepts, const char* expected) {
    const auto field = schema->GetFieldByName(name);
    if (field == nullptr) {
      throw InputError(path, 0, name,
                       fmt::format("column missing from the Parquet schema (columns: {})",
                                   fmt::join(schema->field_names(), ", ")));
    }
    if (!accepts(*field->type())) {
      throw InputError(
          path, 0, name,
          fmt::format("column has type {}, expected {}", field->type()->ToString(), expected));
    }
    const int leaf = metadata->schema()->ColumnIndex(name);
    if (leaf < 0) throw InputError(path, 0, name, "column is nested, expected a flat column");
    leaves.push_back(leaf);
  };
  check(
      kTimestamp, [](const arrow::DataType& t) { return TimestampColumn::accepts(t); },
      "double or float");
  check(
      kId, [](const arrow::DataType& t) { return IntegerColumn::accepts(t, false); },
      "an integer type");
  check(
      kData, [](const arrow::DataType& t) { return StringColumn::accepts(t); },
      "string (hex payload)");
  check(
      kLabel, [](const arrow::DataType& t) { return IntegerColumn::accepts(t, true); },
      "an integer type (1 = attack, 0 = normal)");

  std::vector<int> row_groups(static_cast<std::size_t>(metadata->num_row_groups()));
  for (std::size_t i = 0; i < row_groups.size(); ++i) row_groups[i] = static_cast<int>(i);
  auto reader = file_reader->GetRecordBatchReader(row_groups, leaves);
  if (!reader.ok()) unreadable(reader.status().message());
  batches = std::move(*reader);
}

bool ParquetFrameReader::Impl::next_batch() {
  if (finished) return false;
  if (batch != nullptr) row_base += static_cast<std::uint64_t>(batch->num_rows());
  batch.reset();
  position = 0;
  if (auto st = batches->ReadNext(&batch); !st.ok()) {
    throw InputError(path, row_base + 1, "",
                     one_line("cannot decode Parquet data: " + st.message()));
  }
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
    : impl_(std::make_unique<Impl>()) {
  impl_->path = std::move(file);
  impl_->policy = policy;
  try {
    impl_->open(batch_rows);
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    // parquet:: throws ParquetException for corrupt footers and the like.
    impl_->unreadable(e.what());
  }
}

ParquetFrameReader::~ParquetFrameReader() = default;

std::size_t ParquetFrameReader::read(std::span<CanFrame> out) {
  Impl& s = *impl_;
  std::size_t n = 0;
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
        throw InputError(s.path, s.row_base + static_cast<std::uint64_t>(row) + 1, s.error_column,
                         s.error_reason);
      }
      ++s.skipped;
    }
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(s.path, s.row_base + static_cast<std::uint64_t>(s.position) + 1, "",
                     one_line(std::string("cannot decode Parquet data: ") + e.what()));
  }
  return n;
}

std::uint64_t ParquetFrameReader::skipped_rows() const { return impl_->skipped; }

const std::filesystem::path& ParquetFrameReader::path() const { return impl_->path; }

std::uint64_t ParquetFrameReader::num_rows() const { return impl_->num_rows; }

}  // namespace headroom::can
