#include "headroom/util/printable_text.hpp"

#include <fmt/format.h>

#include "headroom/util/utf8.hpp"

namespace headroom::util {
namespace {

bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// A terminal acts on C0 controls, DEL and C1 controls (U+0080..U+009F, which some terminals read
// as ESC-sequences even in UTF-8, and whose single bytes a terminal in an 8-bit encoding reads as
// such); bytes that are not UTF-8 could be read as C1 controls too. All of them become \xNN.
std::string escape_controls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto escape = [&](unsigned char c) { out += fmt::format("\\x{:02X}", c); };
  for (std::size_t at = 0; at < text.size();) {
    const auto c = static_cast<unsigned char>(text[at]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7F)
        escape(c);
      else
        out += static_cast<char>(c);
      ++at;
      continue;
    }
    const std::size_t length = utf8_sequence_length(text, at);
    const bool c1_control =
        length == 2 && c == 0xC2 && static_cast<unsigned char>(text[at + 1]) < 0xA0;
    if (length == 0) {
      escape(c);
      ++at;
    } else if (c1_control) {
      escape(c);
      escape(static_cast<unsigned char>(text[at + 1]));
      at += 2;
    } else {
      out.append(text.substr(at, length));
      at += length;
    }
  }
  return out;
}

// `at` moved back to the start of the UTF-8 character it falls inside, so that a cut does not
// split a character into escaped halves (at most 3 bytes back).
std::size_t character_start(std::string_view text, std::size_t at) {
  for (int back = 0; back < 3 && at > 0 && at < text.size() &&
                     is_continuation(static_cast<unsigned char>(text[at]));
       ++back)
    --at;
  return at;
}

}  // namespace

std::string printable(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return escape_controls(text);
  const std::size_t head = character_start(text, max_bytes * 2 / 3);
  const std::size_t tail_start =
      character_start(text, text.size() - (max_bytes - max_bytes * 2 / 3));
  return fmt::format("{}…[{} bytes cut]…{}", escape_controls(text.substr(0, head)),
                     tail_start - head, escape_controls(text.substr(tail_start)));
}

std::string printable_path(const std::filesystem::path& path) {
  return printable(path.native(), kMaxQuotedPathBytes);
}

std::string printable_name(std::string_view name) { return printable(name, kMaxQuotedPathBytes); }

}  // namespace headroom::util
