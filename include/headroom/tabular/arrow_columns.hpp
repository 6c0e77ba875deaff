// Typed readers of one Arrow array, bound per record batch, for the Parquet readers (CAN logs,
// graph tables). Each accepts the widths and encodings writers actually produce for its kind of
// value, so a file written by pandas, Polars or pyarrow reads whatever integer or float width it
// chose. A reader views the array it is bound to (no copy) and must be re-bound for the next
// batch. Not thread-safe.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

#include <arrow/array.h>
#include <arrow/type.h>
#include <arrow/type_traits.h>

namespace headroom::tabular {

// Any integer column (and, when allowed, boolean) read as int64 whatever its width.
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

// A float or double column (and, when allowed, any integer or boolean one: a feature written as
// 0/1 or a count) read as double.
class NumberColumn {
 public:
  static bool accepts(const arrow::DataType& type, bool allow_integers) {
    return type.id() == arrow::Type::DOUBLE || type.id() == arrow::Type::FLOAT ||
           (allow_integers && IntegerColumn::accepts(type, true));
  }

  void bind(const arrow::Array& array) {
    array_ = &array;
    if (array.type_id() != arrow::Type::DOUBLE && array.type_id() != arrow::Type::FLOAT) {
      integers_.bind(array);
    }
  }

  bool is_null(std::int64_t row) const { return array_->IsNull(row); }

  double value(std::int64_t row) const {
    switch (array_->type_id()) {
      case arrow::Type::DOUBLE:
        return static_cast<const arrow::DoubleArray*>(array_)->Value(row);
      case arrow::Type::FLOAT:
        return static_cast<const arrow::FloatArray*>(array_)->Value(row);
      default:
        return static_cast<double>(integers_.value(row));
    }
  }

 private:
  const arrow::Array* array_ = nullptr;
  IntegerColumn integers_;
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

}  // namespace headroom::tabular
