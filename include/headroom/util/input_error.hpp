// The error every reader throws for bad input: it names the file, the line (1-based, 0 when the
// failure is not tied to a line) and, when known, the column. The path, column and reason are
// escaped and bounded (util/printable_text.hpp): they quote input, which may hold anything.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace headroom::util {

class InputError : public std::runtime_error {
 public:
  InputError(std::filesystem::path file, std::uint64_t line, std::string column,
             std::string reason);

  const std::filesystem::path& file() const noexcept { return file_; }
  std::uint64_t line() const noexcept { return line_; }
  const std::string& column() const noexcept { return column_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::filesystem::path file_;
  std::uint64_t line_;
  std::string column_;
  std::string reason_;
};

}  // namespace headroom::util
