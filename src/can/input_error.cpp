#include "headroom/can/input_error.hpp"

#include <fmt/format.h>

#include <string_view>

namespace headroom::can {
namespace {

// Reasons and column names quote input, which may hold anything: a NUL would cut the message
// short, an escape sequence would reach the terminal, and a 10 MB field would be a 10 MB line.
// Control bytes become \xNN, and a long text keeps its start and end (where the reason's own
// words are) around a note of how much was cut.
std::string escape_controls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7F)
      out += fmt::format("\\x{:02X}", c);
    else
      out += ch;
  }
  return out;
}

std::string printable(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return escape_controls(text);
  const std::size_t head = max_bytes * 2 / 3;
  const std::size_t tail = max_bytes - head;
  return fmt::format("{}…[{} bytes cut]…{}", escape_controls(text.substr(0, head)),
                     text.size() - head - tail, escape_controls(text.substr(text.size() - tail)));
}

constexpr std::size_t kMaxReasonBytes = 480;
constexpr std::size_t kMaxColumnBytes = 120;

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
    : std::runtime_error(describe(file, line, printable(column, kMaxColumnBytes),
                                  printable(reason, kMaxReasonBytes))),
      file_(std::move(file)),
      line_(line),
      column_(printable(column, kMaxColumnBytes)),
      reason_(printable(reason, kMaxReasonBytes)) {}

}  // namespace headroom::can
