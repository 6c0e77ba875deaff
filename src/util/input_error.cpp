#include "headroom/util/input_error.hpp"

#include <fmt/format.h>

#include <string_view>

#include "headroom/util/printable_text.hpp"

namespace headroom::util {
namespace {

std::string describe(const std::filesystem::path& file, std::uint64_t line,
                     const std::string& column, const std::string& reason) {
  std::string where = util::printable_path(file);
  if (line > 0) where += fmt::format(":{}", line);
  if (!column.empty()) return fmt::format("{}: column '{}': {}", where, column, reason);
  return fmt::format("{}: {}", where, reason);
}

}  // namespace

InputError::InputError(std::filesystem::path file, std::uint64_t line, std::string column,
                       std::string reason)
    : std::runtime_error(describe(file, line, util::printable(column, util::kMaxQuotedNameBytes),
                                  util::printable(reason, util::kMaxQuotedReasonBytes))),
      file_(std::move(file)),
      line_(line),
      column_(util::printable(column, util::kMaxQuotedNameBytes)),
      reason_(util::printable(reason, util::kMaxQuotedReasonBytes)) {}

}  // namespace headroom::util
