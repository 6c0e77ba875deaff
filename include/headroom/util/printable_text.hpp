// Input made safe to print. Input may hold anything: a NUL would cut a message short, an escape
// sequence would reach the terminal, and a 10 MB field would become a 10 MB line. Everything
// headroom prints that came from input goes through here: what an error, warning or note quotes
// (a file's contents, a column name, a config key or value, a path) and the names in its tables
// (split, file and attack-type names, which come from file and directory names). Data written for
// programs (JSON) keeps the names as they are. Stateless and thread-safe.
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

// Control bytes (below 0x20, and 0x7F), C1 controls (U+0080..U+009F) and bytes that are not UTF-8
// become \xNN, one per byte; everything else is kept, UTF-8 included. Text longer than
// `max_bytes` keeps its first two thirds and last third of `max_bytes` (where a reason's own words
// are; cut at character boundaries) around a "…[N bytes cut]…" note.
std::string printable(std::string_view text, std::size_t max_bytes = kMaxQuotedReasonBytes);

// printable() of a path's native text, bounded by kMaxQuotedPathBytes.
std::string printable_path(const std::filesystem::path& path);

// printable() of a name that comes from a file or directory name (a split, an attack type, a
// dataset, a stage), bounded by kMaxQuotedPathBytes.
std::string printable_name(std::string_view name);

}  // namespace headroom::util
