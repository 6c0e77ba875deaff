#include "headroom/util/bounded_json.hpp"

#include <fmt/format.h>
#include <cstddef>
#include <optional>

namespace headroom::util {
namespace {

// The byte offset (from 1, as nlohmann counts) where `text` opens its (kMaxJsonDepth + 1)-th
// nested array or object, if it does. Brackets inside strings do not count; whether the rest is
// JSON is the parser's to say.
std::optional<std::size_t> too_deep_at(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i + 1;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

}  // namespace

nlohmann::json parse_json(std::string_view text) {
  if (const auto byte = too_deep_at(text))
    throw nlohmann::json::parse_error::create(
        101, *byte,
        fmt::format("nested more than {} levels deep; not a file headroom wrote", kMaxJsonDepth),
        nullptr);
  return nlohmann::json::parse(text);
}

nlohmann::json parse_json_or_discarded(std::string_view text) {
  if (too_deep_at(text)) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

}  // namespace headroom::util
