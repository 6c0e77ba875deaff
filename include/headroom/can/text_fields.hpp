// Small text helpers the log readers share: blank tests, trimming, whitespace tokens, ASCII
// case-insensitive comparison. Pure inline functions, thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

namespace headroom::can {

constexpr bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

constexpr bool is_blank(std::string_view text) {
  for (char c : text) {
    if (!is_space(c)) return false;
  }
  return true;
}

constexpr std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// Splits off the next run of non-space characters from `rest`, dropping the spaces before it;
// empty when `rest` holds no more. Space-aligned logs (candump's screen layout, HCRL's text file)
// are read token by token.
constexpr std::string_view next_token(std::string_view& rest) {
  std::size_t start = 0;
  while (start < rest.size() && is_space(rest[start])) ++start;
  std::size_t stop = start;
  while (stop < rest.size() && !is_space(rest[stop])) ++stop;
  const std::string_view token = rest.substr(start, stop - start);
  rest.remove_prefix(stop);
  return token;
}

constexpr char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// ASCII only: labels and header names are plain identifiers; locale rules would be wrong here.
constexpr bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

constexpr bool istarts_with(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && iequals(text.substr(0, prefix.size()), prefix);
}

}  // namespace headroom::can
