// A text corpus directory as TextGCN's benchmarks lay it out: `labels.tsv` (header
// `index<TAB>split<TAB>label`, one row per document in corpus order, split `train` or `test`) and
// the documents, one per line, in `corpus.txt` (raw text) and/or `corpus.clean.txt` (already
// cleaned). Stateless and thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace headroom::text {

inline constexpr const char* kLabelsFileName = "labels.tsv";
inline constexpr const char* kRawCorpusFileName = "corpus.txt";
inline constexpr const char* kCleanCorpusFileName = "corpus.clean.txt";

// Whether `directory` holds labels.tsv and a corpus file: what `preprocess` takes as a corpus.
bool is_text_corpus(const std::filesystem::path& directory);

// Which file to read.
enum class CorpusSource {
  kAuto,   // corpus.clean.txt when present (the corpus's own cleaning), else corpus.txt
  kRaw,    // corpus.txt, cleaned here
  kClean,  // corpus.clean.txt, taken as already cleaned
};

struct CorpusFiles {
  std::filesystem::path labels;
  std::filesystem::path text;
  bool text_is_clean = false;
};

// Throws std::runtime_error naming the directory and the missing file.
CorpusFiles locate_corpus_files(const std::filesystem::path& directory, CorpusSource source);

// labels.tsv, read whole (a few bytes per document).
struct CorpusLabels {
  std::vector<std::string> document_names;  // the index column, in corpus order
  std::vector<bool> is_test;                // split: test (true) or train (false)
  std::vector<std::int32_t> label;          // index into classes
  std::vector<std::string> classes;         // distinct labels, sorted
  std::size_t size() const { return document_names.size(); }
};

// The rows come back in corpus order. When every index is a decimal number, a row describes
// document number `index` (0 is the corpus's first line), whatever its place in the file; other
// indices are names, and the file's order is the corpus's.
// Throws std::runtime_error "FILE:LINE: reason" for a wrong header, a row without three
// tab-separated fields, a split other than train/test, an empty label or name, a blank line
// before the end, an index given twice, or a number past the last document (numbers must name
// each document from 0 once).
CorpusLabels read_corpus_labels(const std::filesystem::path& file);

}  // namespace headroom::text
