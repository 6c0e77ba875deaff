// What format detection reads of a file, shared by the formats' definitions (each beside its
// reader): the first non-blank line, and a comma split and number test for sniffing it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace headroom::can {

struct FirstLine {
  std::string text;  // trimmed
  std::uint64_t number = 0;
};

// The first non-blank line of `file`, read in a small block. Throws util::InputError for a file
// that cannot be read or holds only blank lines.
FirstLine first_content_line(const std::filesystem::path& file);

// `line` split on commas, each field trimmed and stripped of surrounding double quotes (for
// sniffing only: no quoting rules beyond that).
std::vector<std::string_view> split_commas(std::string_view line);

// Whether all of `text` is one number (as std::from_chars reads a double).
bool is_number(std::string_view text);

}  // namespace headroom::can
