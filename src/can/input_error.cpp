#include "headroom/can/input_error.hpp"

#include <fmt/format.h>

namespace headroom::can {
namespace {

std::string describe(const std::filesystem::path& file, std::uint64_t line,
                     const std::string& column, const std::string& reason) {
  std::string where = file.string();
  if (line > 0) where += fmt::format(":{}", line);
  if (!column.empty()) return fmt::format("{}: column '{}': {}", where, column, reason);
  return fmt::format("{}: {}", where, reason);
}

}  // namespace

InputError::InputError(std::filesystem::path file, std::uint64_t line, std::string column,
                       std::string reason)
    : std::runtime_error(describe(file, line, column, reason)),
      file_(std::move(file)),
      line_(line),
      column_(std::move(column)),
      reason_(std::move(reason)) {}

}  // namespace headroom::can
