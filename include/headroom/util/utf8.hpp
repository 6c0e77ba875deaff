// UTF-8 well-formedness, byte by byte. File names are bytes, but the store's manifest and every
// JSON file headroom writes hold text: a name that is not UTF-8 cannot be recorded as it is.
// Stateless and thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

namespace headroom::util {

// The length (1 to 4) of the well-formed UTF-8 character starting at text[at], or 0 when the bytes
// there are not one: a stray continuation byte, a lead byte without its continuations, an
// overlong form, a surrogate, a code point past U+10FFFF. `at` must be below text.size().
std::size_t utf8_sequence_length(std::string_view text, std::size_t at);

// True when all of `text` is well-formed UTF-8.
bool is_utf8(std::string_view text);

}  // namespace headroom::util
