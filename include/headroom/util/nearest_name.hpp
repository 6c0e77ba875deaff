// "Did you mean …?" for a misspelt name (a config key, a section): the closest valid name by edit
// distance. Stateless and thread-safe.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace headroom::util {

// Insertions, deletions, substitutions and swaps of two adjacent characters needed to turn `a`
// into `b`, each counted as 1 (optimal string alignment distance), comparing bytes
// case-insensitively (ASCII).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `name`, or an empty string when even the closest is too far to be a
// likely typo: more than max(2, name.size() / 3) edits. Ties go to the earlier candidate.
std::string nearest_name(std::string_view name, std::span<const std::string> candidates);

}  // namespace headroom::util
