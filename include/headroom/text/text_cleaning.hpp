// Turning a document into words as TextGCN does: Kim's string cleaning (Kim 2014, "Convolutional
// Neural Networks for Sentence Classification", whose clean_str TextGCN applies), lower case, and
// optionally English stop words out. Stateless and thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace headroom::text {

// Kim's cleaning, step by step as its regular expressions run: every character but ASCII letters,
// digits and ( ) , ! ? ' ` becomes a space; the contractions 's 've n't 're 'd 'll (lower case
// only, as written) are split off their word; , ! ( ) ? become words of their own -- ( ) ? written
// with a backslash, "\(", "\)", "\?", as the reference's replacement strings leave them; then lower
// case. Appends the resulting words to `words`. `text` is UTF-8 (a non-ASCII character becomes
// space(s), as in the reference, where it is one).
void clean_words_kim(std::string_view text, std::vector<std::string>& words);

// Splits already-cleaned text at ASCII whitespace (space, tab, CR, LF, VT, FF), unchanged.
void split_words(std::string_view text, std::vector<std::string>& words);

// Whether `word` (lower case) is on headroom's English stop-word list (english_stop_words.inc:
// the 179 words of NLTK's English list, as facts).
bool is_english_stop_word(std::string_view word);
std::size_t english_stop_word_count();

}  // namespace headroom::text
