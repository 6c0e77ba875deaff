// Parsing JSON that headroom reads back (run files, checkpoint records, store and part manifests,
// caches, a tracking server's answers), bounded in nesting depth. nlohmann's parser and its value
// recurse once per level: a file of 100,000 '[' overflowed the stack (a segfault, no message)
// wherever such a file was read. Everything headroom writes nests a few levels deep, so a document
// nested deeper than kMaxJsonDepth is refused before nlohmann sees it. Stateless and thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace headroom::util {

// Far above what headroom writes (at most about six levels), far below what overflows a stack.
inline constexpr int kMaxJsonDepth = 128;

// nlohmann::json::parse(text), except that a document nested deeper than kMaxJsonDepth throws
// nlohmann::json::parse_error ("... at byte N: nested more than 128 levels deep ..."), so a
// caller's handler of parse errors names the file for it as for any other.
nlohmann::json parse_json(std::string_view text);

// nlohmann::json::parse(text, nullptr, false): a discarded value when `text` is not JSON or nests
// deeper than kMaxJsonDepth.
nlohmann::json parse_json_or_discarded(std::string_view text);

}  // namespace headroom::util
