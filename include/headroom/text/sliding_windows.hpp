// TextGCN's sliding windows over one document: every run of `window` consecutive words (a
// document shorter than that is one window; an empty one has none). For PMI it needs, per word,
// the windows that contain it, and per word pair, the windows that contain both.
//
// Windows overlap in all but one word, so the pairs are not emitted window by window: a word is
// present in an unbroken run of windows from the one it enters to the one it leaves, and a pair in
// the overlap of its two words' runs. When a word leaves, each word still present gets the pair's
// whole run at once, so a document costs one emission per (leaving word, present word) instead
// of one per (window, pair) -- window-size times fewer. Stateless; thread-safe for distinct
// outputs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "headroom/text/pair_counter.hpp"

namespace headroom::text {

// Adds the document's windows: word_windows[w] += the windows containing word w, and
// pairs.add(pair_key(a, b), n) and pairs.add(pair_key(b, a), n) with n the windows containing
// both, for a != b (the same pair may be added several times; the counter sums). `words` are
// indices below word_windows.size(). Returns the number of windows.
std::uint64_t count_windows(std::span<const std::uint32_t> words, std::size_t window,
                            std::vector<std::uint64_t>& word_windows,
                            ExternalPairCounter::Producer& pairs);

}  // namespace headroom::text
