#include "headroom/tabular/parquet_table.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <sys/stat.h>

#include <arrow/io/file.h>
#include <arrow/memory_pool.h>
#include <arrow/status.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <parquet/arrow/reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/properties.h>
#include <parquet/schema.h>

#include "headroom/util/input_error.hpp"
#include "headroom/util/regular_file.hpp"

namespace headroom::tabular {
namespace {

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
  return static_cast<std::int64_t>(ParquetTable::kDecodeBaseBytes +
                                   rows * ParquetTable::kDecodeBytesPerBatchRow);
}

}  // namespace

std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

struct ParquetTable::Impl {
  std::filesystem::path path;
  // Declared before the readers that allocate from it, so it outlives them.
  std::unique_ptr<LimitedMemoryPool> memory;
  std::unique_ptr<parquet::arrow::FileReader> file_reader;
  std::shared_ptr<arrow::Schema> schema;
  std::vector<int> leaves;
  std::unique_ptr<arrow::RecordBatchReader> batches;
  std::uint64_t num_rows = 0;
  std::uint64_t rows_before = 0;
  std::int64_t last_batch_rows = 0;
  bool finished = false;

  [[noreturn]] void unreadable(const std::string& why) const {
    throw util::InputError(path, 0, "", one_line("not a readable Parquet file: " + why));
  }

  // The schema's field `name`; an error naming the file, the column and the columns there are
  // when it has none.
  std::shared_ptr<arrow::Field> required_field(const std::string& name) const {
    auto field = schema->GetFieldByName(name);
    if (field == nullptr) {
      throw util::InputError(path, 0, name,
                             fmt::format("column missing from the Parquet schema (columns: {})",
                                         fmt::join(schema->field_names(), ", ")));
    }
    return field;
  }

  void open(std::string_view kind, std::size_t batch_rows);
};

void ParquetTable::Impl::open(std::string_view kind, std::size_t batch_rows) {
  // Checked up front: Arrow's own messages for these cases are long and platform-flavoured. The
  // file is opened here, without blocking, and handed to Arrow as a descriptor: Arrow's own open of
  // a FIFO would block forever, and only a regular file (links followed) is read.
  std::string why;
  auto fd = util::try_open_regular_for_reading(path, &why);
  if (!fd) {
    throw util::InputError(path, 0, "",
                           why.starts_with("a directory")
                               ? fmt::format("is a directory, not {}", kind)
                               : "cannot open file: " + why);
  }
  if (util::open_file_size(fd.get(), path) == 0) {
    throw util::InputError(path, 0, "", "file is empty (0 bytes)");
  }

  // The descriptor becomes Arrow's: its file closes it.
  auto file = arrow::io::ReadableFile::Open(fd.release());
  if (!file.ok()) {
    throw util::InputError(path, 0, "", one_line("cannot open file: " + file.status().message()));
  }

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

  if (auto st = file_reader->GetSchema(&schema); !st.ok()) unreadable(st.message());
  num_rows = static_cast<std::uint64_t>(file_reader->parquet_reader()->metadata()->num_rows());
}

ParquetTable::ParquetTable(std::filesystem::path file, std::string_view kind,
                           std::size_t batch_rows)
    : impl_(std::make_unique<Impl>()) {
  impl_->path = std::move(file);
  try {
    impl_->open(kind, batch_rows);
  } catch (const util::InputError&) {
    throw;
  } catch (const std::exception& e) {
    // parquet:: throws ParquetException for corrupt footers and the like.
    impl_->unreadable(e.what());
  }
}

ParquetTable::~ParquetTable() = default;

const std::filesystem::path& ParquetTable::path() const { return impl_->path; }

const arrow::Schema& ParquetTable::schema() const { return *impl_->schema; }

std::uint64_t ParquetTable::num_rows() const { return impl_->num_rows; }

bool ParquetTable::has_column(const std::string& name) const {
  return impl_->schema->GetFieldByName(name) != nullptr;
}

void ParquetTable::read_column(const std::string& name,
                               const std::function<bool(const arrow::DataType&)>& accepts,
                               std::string_view expected) {
  Impl& s = *impl_;
  const auto field = s.required_field(name);
  if (!accepts(*field->type())) {
    throw util::InputError(
        s.path, 0, name,
        fmt::format("column has type {}, expected {}", field->type()->ToString(), expected));
  }
  const int leaf = s.file_reader->parquet_reader()->metadata()->schema()->ColumnIndex(name);
  if (leaf < 0) throw util::InputError(s.path, 0, name, "column is nested, expected a flat column");
  s.leaves.push_back(leaf);
}

void ParquetTable::read_list_column(
    const std::string& name, const std::function<bool(const arrow::DataType&)>& accepts_element,
    std::string_view expected) {
  Impl& s = *impl_;
  const auto field = s.required_field(name);
  const auto& type = *field->type();
  if (type.id() != arrow::Type::LIST || !accepts_element(*type.field(0)->type())) {
    throw util::InputError(
        s.path, 0, name, fmt::format("column has type {}, expected {}", type.ToString(), expected));
  }
  // The list's one leaf: the Parquet column whose path starts at this field.
  const auto* schema = s.file_reader->parquet_reader()->metadata()->schema();
  std::vector<int> leaves;
  for (int i = 0; i < schema->num_columns(); ++i)
    if (schema->Column(i)->path()->ToDotVector().front() == name) leaves.push_back(i);
  if (leaves.size() != 1)
    throw util::InputError(
        s.path, 0, name,
        fmt::format("column has {} Parquet leaves, expected a list of one", leaves.size()));
  s.leaves.push_back(leaves.front());
}

std::shared_ptr<arrow::RecordBatch> ParquetTable::next_batch() {
  Impl& s = *impl_;
  if (s.finished) return nullptr;
  s.rows_before += static_cast<std::uint64_t>(s.last_batch_rows);
  s.last_batch_rows = 0;
  std::shared_ptr<arrow::RecordBatch> batch;
  try {
    if (s.batches == nullptr) {
      const int groups = s.file_reader->parquet_reader()->metadata()->num_row_groups();
      std::vector<int> row_groups(static_cast<std::size_t>(groups));
      for (int i = 0; i < groups; ++i) row_groups[static_cast<std::size_t>(i)] = i;
      auto reader = s.file_reader->GetRecordBatchReader(row_groups, s.leaves);
      if (!reader.ok()) s.unreadable(reader.status().message());
      s.batches = std::move(*reader);
    }
    if (auto st = s.batches->ReadNext(&batch); !st.ok()) {
      throw util::InputError(s.path, s.rows_before + 1, "",
                             one_line("cannot decode Parquet data: " + st.message()));
    }
  } catch (const util::InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw util::InputError(s.path, s.rows_before + 1, "",
                           one_line(std::string("cannot decode Parquet data: ") + e.what()));
  }
  if (batch == nullptr) {
    s.finished = true;
    return nullptr;
  }
  s.last_batch_rows = batch->num_rows();
  return batch;
}

std::uint64_t ParquetTable::rows_before_batch() const { return impl_->rows_before; }

}  // namespace headroom::tabular
