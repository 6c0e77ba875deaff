#include "headroom/text/text_cleaning.hpp"

#include <algorithm>
#include <array>
#include <unordered_set>

namespace headroom::text {
namespace {

bool kept_by_kim(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '(' ||
         c == ')' || c == ',' || c == '!' || c == '?' || c == '\'' || c == '`';
}

bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Every non-overlapping `from`, left to right, becomes `to` (what re.sub does with a literal).
void replace_all(std::string& text, std::string_view from, std::string_view to) {
  if (text.find(from) == std::string::npos) return;
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  std::size_t at = 0;
  for (auto hit = text.find(from); hit != std::string::npos; hit = text.find(from, at)) {
    out.append(text, at, hit - at);
    out.append(to);
    at = hit + from.size();
  }
  out.append(text, at, std::string::npos);
  text.swap(out);
}

struct Replacement {
  std::string_view from;
  std::string_view to;
};

// In the reference's order; the order matters only where one's output could feed another, which
// these never do, but it is kept.
constexpr std::array<Replacement, 11> kKimReplacements = {{
    {"'s", " 's"},
    {"'ve", " 've"},
    {"n't", " n't"},
    {"'re", " 're"},
    {"'d", " 'd"},
    {"'ll", " 'll"},
    {",", " , "},
    {"!", " ! "},
    {"(", " \\( "},
    {")", " \\) "},
    {"?", " \\? "},
}};

const std::unordered_set<std::string_view>& stop_words() {
  static const std::unordered_set<std::string_view> words = [] {
    static constexpr std::string_view kList =
#include "english_stop_words.inc"
        ;
    std::unordered_set<std::string_view> set;
    std::size_t at = 0;
    while (at < kList.size()) {
      while (at < kList.size() && is_ascii_space(kList[at])) ++at;
      std::size_t end = at;
      while (end < kList.size() && !is_ascii_space(kList[end])) ++end;
      if (end > at) set.insert(kList.substr(at, end - at));
      at = end;
    }
    return set;
  }();
  return words;
}

}  // namespace

void split_words(std::string_view text, std::vector<std::string>& words) {
  std::size_t at = 0;
  while (at < text.size()) {
    while (at < text.size() && is_ascii_space(text[at])) ++at;
    std::size_t end = at;
    while (end < text.size() && !is_ascii_space(text[end])) ++end;
    if (end > at) words.emplace_back(text.substr(at, end - at));
    at = end;
  }
}

void clean_words_kim(std::string_view text, std::vector<std::string>& words) {
  std::string cleaned(text);
  for (char& c : cleaned)
    if (!kept_by_kim(c)) c = ' ';
  for (const auto& [from, to] : kKimReplacements) replace_all(cleaned, from, to);
  for (char& c : cleaned)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  split_words(cleaned, words);
}

bool is_english_stop_word(std::string_view word) { return stop_words().count(word) > 0; }

std::size_t english_stop_word_count() { return stop_words().size(); }

}  // namespace headroom::text
