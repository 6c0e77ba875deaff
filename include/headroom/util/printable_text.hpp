// Input quoted in an error message, made safe to print. Input may hold anything: a NUL would cut
// the message short, an escape sequence would reach the terminal, and a 10 MB field would become a
// 10 MB line. Every message that quotes a file's contents, a column name, a config key or value,
// or a path the user gave goes through here. Stateless and thread-safe.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace headroom::util {

// Bounds for the usual kinds of quoted text, in bytes of input.
inline constexpr std::size_t kMaxQuotedReasonBytes = 480;  // a reason that quotes a field
inline constexpr std::size_t kMaxQuotedNameBytes = 120;    // a column name, key or section
inline constexpr std::size_t kMaxQuotedPathBytes = 1024;   // a file or directory path

// Control bytes (below 0x20, and 0x7F) become \xNN; everything else is kept, UTF-8 included.
// Text longer than `max_bytes` keeps its first two thirds and last third of `max_bytes` (where a
// reason's own words are) around a "…[N bytes cut]…" note.
std::string printable(std::string_view text, std::size_t max_bytes = kMaxQuotedReasonBytes);

// printable() of a path's native text, bounded by kMaxQuotedPathBytes.
std::string printable_path(const std::filesystem::path& path);

}  // namespace headroom::util
