#include "headroom/text/sliding_windows.hpp"

#include <algorithm>
#include <stdexcept>

namespace headroom::text {
namespace {

// A word present in the current window: how many times, and since which window.
struct Present {
  std::uint32_t word;
  std::uint32_t copies;
  std::uint64_t since;
};

void emit_pair(ExternalPairCounter::Producer& pairs, std::uint32_t a, std::uint32_t b,
               std::uint64_t windows) {
  pairs.add(pair_key(a, b), windows);
  pairs.add(pair_key(b, a), windows);
}

}  // namespace

std::uint64_t count_windows(std::span<const std::uint32_t> words, std::size_t window,
                            std::vector<std::uint64_t>& word_windows,
                            ExternalPairCounter::Producer& pairs) {
  if (window == 0) throw std::invalid_argument("count_windows: window of 0 words");
  if (words.empty()) return 0;
  const std::size_t first_window = std::min(window, words.size());
  const std::uint64_t windows = words.size() - first_window + 1;
  std::vector<Present> present;  // at most `window` entries: a linear search is the fastest
  present.reserve(first_window);
  const auto find = [&](std::uint32_t word) {
    return std::find_if(present.begin(), present.end(),
                        [&](const Present& p) { return p.word == word; });
  };
  const auto enter = [&](std::uint32_t word, std::uint64_t at) {
    const auto it = find(word);
    if (it != present.end())
      ++it->copies;
    else
      present.push_back({word, 1, at});
  };
  for (std::size_t i = 0; i < first_window; ++i) enter(words[i], 0);

  // Window s spans words[s, s + window). Moving from s - 1 to s, words[s - 1] goes, and
  // words[s + window - 1] comes.
  for (std::uint64_t s = 1; s < windows; ++s) {
    const std::uint32_t leaving = words[s - 1];
    const std::uint32_t coming = words[s + window - 1];
    if (leaving == coming) continue;
    const auto it = find(leaving);
    if (--it->copies == 0) {
      // Present in windows [it->since, s): with each word still here, for the overlap.
      word_windows[leaving] += s - it->since;
      for (const Present& other : present)
        if (other.word != leaving)
          emit_pair(pairs, leaving, other.word, s - std::max(it->since, other.since));
      present.erase(it);
    }
    enter(coming, s);
  }
  // What is still present stays to the last window.
  for (std::size_t i = 0; i < present.size(); ++i) {
    word_windows[present[i].word] += windows - present[i].since;
    for (std::size_t j = i + 1; j < present.size(); ++j)
      emit_pair(pairs, present[i].word, present[j].word,
                windows - std::max(present[i].since, present[j].since));
  }
  return windows;
}

}  // namespace headroom::text
