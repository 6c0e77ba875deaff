// Corpus -> graph store: TextGCN's graph (Yao, Mao, Luo, "Graph Convolutional Networks for Text
// Classification", AAAI 2019) built from a text corpus directory (text_corpus.hpp) into a
// node-graph store (store/node_graph_builder.hpp). docs/text-graphs.md describes it.
//
// Nodes: the documents (in corpus order), then the vocabulary's words (sorted bytewise). Edges:
//   document-word  TF-IDF: tf = how often the word occurs in the document, idf = log(documents /
//                  documents containing the word); an idf of 0 (a word in every document) is
//                  no edge;
//   word-word      positive PMI over the sliding windows (sliding_windows.hpp): PMI(i, j) =
//                  log(#W(i, j) * #W / (#W(i) * #W(j))), an edge only where it is above 0;
//   self-loops     on every node;
// all weights normalised symmetrically: D^-1/2 (A + I) D^-1/2, D the row sums of A + I.
// Labels: documents their class, words none; split: labels.tsv's train/test, with a seeded
// fraction of the training documents held out for validation.
//
// Memory: the corpus is read line by line; held are the word ids of the cleaned corpus (4 bytes a
// word), the document-word matrix and its transpose, per-word counters, and the co-occurrence
// counter's buffers (count_memory_bytes); never a V x V matrix or a map of every word pair.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "headroom/text/corpus_text.hpp"
#include "headroom/text/pair_counter.hpp"
#include "headroom/text/text_corpus.hpp"
#include "headroom/util/exclusive_lock.hpp"

namespace headroom::text {

enum class StopWords {
  kAuto,    // removed from raw corpora of long documents (see kShortDocumentWords), else kept
  kRemove,  // English stop words out (text_cleaning.hpp)
  kKeep,
};

// Mean cleaned words per document below which a raw corpus counts as short texts, whose stop
// words and rare words TextGCN keeps (movie-review sentences, ~21 words) -- 20 Newsgroups (~270)
// and R8 (~100) lose them.
inline constexpr double kShortDocumentWords = 50;

struct TextGraphOptions {
  CorpusSource source = CorpusSource::kAuto;
  StopWords stop_words = StopWords::kAuto;
  // Words seen fewer times in the whole corpus are dropped. nullopt: 5 where stop words are
  // removed (kAuto's decision), else 1 (every word kept).
  std::optional<std::uint32_t> min_count;
  std::size_t window = 20;
  double validation_fraction = 0.1;
  std::uint64_t seed = 0;
  unsigned threads = 0;                                     // 0: every usable core
  std::size_t count_memory_bytes = std::size_t{128} << 20;  // co-occurrence counter's buffers
  bool overwrite = false;
  util::WhenLocked when_locked = util::WhenLocked::kFail;
};

struct TextGraphReport {
  CorpusTextReport text;
  bool cleaned = false;  // Kim's cleaning applied (a raw corpus)
  bool stop_words_removed = false;
  std::uint32_t min_count = 1;
  std::uint64_t documents = 0;
  std::uint64_t train = 0, validation = 0, test = 0;
  std::uint64_t classes = 0;
  std::uint64_t words_before_filter = 0;  // distinct words after cleaning
  std::uint64_t vocabulary = 0;           // word nodes
  std::uint64_t tokens = 0;               // words of the corpus kept (after filtering)
  std::uint64_t windows = 0;
  std::uint64_t document_word_edges = 0;  // undirected
  std::uint64_t word_word_edges = 0;      // undirected, positive PMI
  std::uint64_t stored_edges = 0;         // CSR entries (both directions, self-loops once)
  PairCounterStatistics counting;
  double seconds = 0;
  std::vector<std::string> summary_lines() const;  // what preprocess prints and inspect repeats
};

// Builds the store at `store` from the corpus directory, counting windows on options.threads
// threads of its own (call it from one thread; two calls on one store exclude each other through
// the store's lock). Throws std::runtime_error naming file,
// line and reason for bad input (labels.tsv rows; a document count that differs from labels.tsv's
// rows) and the store's errors (store/node_graph_builder.hpp).
TextGraphReport build_text_graph_store(const std::filesystem::path& corpus_directory,
                                       const std::filesystem::path& store,
                                       const TextGraphOptions& options);

}  // namespace headroom::text
