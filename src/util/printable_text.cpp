#include "headroom/util/printable_text.hpp"

#include <fmt/format.h>

namespace headroom::util {
namespace {

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

}  // namespace

std::string printable(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return escape_controls(text);
  const std::size_t head = max_bytes * 2 / 3;
  const std::size_t tail = max_bytes - head;
  return fmt::format("{}…[{} bytes cut]…{}", escape_controls(text.substr(0, head)),
                     text.size() - head - tail, escape_controls(text.substr(text.size() - tail)));
}

std::string printable_path(const std::filesystem::path& path) {
  return printable(path.native(), kMaxQuotedPathBytes);
}

}  // namespace headroom::util
