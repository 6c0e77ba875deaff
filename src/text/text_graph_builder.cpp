#include "headroom/text/text_graph_builder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <memory>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "headroom/store/node_graph_builder.hpp"
#include "headroom/store/store_builder.hpp"
#include "headroom/text/sliding_windows.hpp"
#include "headroom/text/text_cleaning.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/thread_count.hpp"

namespace headroom::text {
namespace {

constexpr std::uint32_t kDropped = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint8_t kDocumentKind = 0;
constexpr std::uint8_t kWordKind = 1;

// The corpus as word ids: document d holds ids[offsets[d], offsets[d+1]).
struct WordIds {
  std::vector<std::uint32_t> ids;
  std::vector<std::uint64_t> offsets{0};
  std::span<const std::uint32_t> document(std::size_t d) const {
    return std::span(ids).subspan(offsets[d], offsets[d + 1] - offsets[d]);
  }
  std::size_t documents() const { return offsets.size() - 1; }
};

struct Tokenized {
  WordIds corpus;                     // ids into `words`
  std::vector<std::string> words;     // in order of first appearance
  std::vector<std::uint64_t> counts;  // occurrences in the whole corpus
};

void check_document_count(const CorpusFiles& files, const CorpusLabels& labels,
                          const CorpusTextReport& text) {
  const std::uint64_t rows = labels.size();
  if (text.documents > rows)
    throw std::runtime_error(fmt::format(
        "{}:{}: document {} has no row in {} (it has {} rows; one line is one document)",
        util::printable_path(files.text), rows + 1, rows + 1, util::printable_path(files.labels),
        rows));
  if (text.documents < rows)
    throw std::runtime_error(fmt::format(
        "{}:{}: row of document {}, but {} holds only {} documents (one line is one document)",
        util::printable_path(files.labels), text.documents + 2, text.documents + 1,
        util::printable_path(files.text), text.documents));
}

Tokenized tokenize(const CorpusTextReport& text, bool clean) {
  Tokenized t;
  std::unordered_map<std::string, std::uint32_t> id_of;
  std::vector<std::string> words;
  read_corpus_documents(text, [&](std::uint64_t, std::string_view document) {
    words.clear();
    if (clean)
      clean_words_kim(document, words);
    else
      split_words(document, words);
    for (auto& word : words) {
      const auto [it, inserted] =
          id_of.try_emplace(word, static_cast<std::uint32_t>(t.words.size()));
      if (inserted) {
        t.words.push_back(std::move(word));
        t.counts.push_back(0);
      }
      ++t.counts[it->second];
      t.corpus.ids.push_back(it->second);
    }
    t.corpus.offsets.push_back(t.corpus.ids.size());
  });
  return t;
}

// Keeps the words that pass the filters, sorted bytewise; rewrites the corpus in their ids (the
// dropped words leave their documents, as TextGCN rewrites its corpus before the windows).
std::vector<std::string> filter_vocabulary(Tokenized& t, bool remove_stop_words,
                                           std::uint32_t min_count) {
  std::vector<std::uint32_t> kept;
  for (std::uint32_t id = 0; id < t.words.size(); ++id)
    if (t.counts[id] >= min_count && !(remove_stop_words && is_english_stop_word(t.words[id])))
      kept.push_back(id);
  std::sort(kept.begin(), kept.end(),
            [&](std::uint32_t a, std::uint32_t b) { return t.words[a] < t.words[b]; });
  std::vector<std::uint32_t> new_id(t.words.size(), kDropped);
  std::vector<std::string> vocabulary;
  vocabulary.reserve(kept.size());
  for (const auto id : kept) {
    new_id[id] = static_cast<std::uint32_t>(vocabulary.size());
    vocabulary.push_back(std::move(t.words[id]));
  }
  t.words = {};
  t.counts = {};
  std::size_t out = 0;
  std::size_t begin = 0;
  for (std::size_t d = 0; d < t.corpus.documents(); ++d) {
    const std::size_t end = t.corpus.offsets[d + 1];
    for (std::size_t i = begin; i < end; ++i)
      if (new_id[t.corpus.ids[i]] != kDropped) t.corpus.ids[out++] = new_id[t.corpus.ids[i]];
    begin = end;
    t.corpus.offsets[d + 1] = out;
  }
  t.corpus.ids.resize(out);
  t.corpus.ids.shrink_to_fit();
  return vocabulary;
}

// A sparse matrix by rows: row r's entries are [offsets[r], offsets[r+1]), columns ascending.
struct SparseRows {
  std::vector<std::uint64_t> offsets{0};
  std::vector<std::uint32_t> columns;
  std::vector<double> weights;
};

// Document-word TF-IDF (rows: documents) and its transpose (rows: words).
std::pair<SparseRows, SparseRows> tf_idf(const WordIds& corpus, std::size_t vocabulary) {
  SparseRows counts;  // raw term counts first
  std::vector<std::uint32_t> sorted;
  for (std::size_t d = 0; d < corpus.documents(); ++d) {
    const auto words = corpus.document(d);
    sorted.assign(words.begin(), words.end());
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size();) {
      std::size_t j = i;
      while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
      counts.columns.push_back(sorted[i]);
      counts.weights.push_back(static_cast<double>(j - i));
      i = j;
    }
    counts.offsets.push_back(counts.columns.size());
  }
  std::vector<std::uint64_t> document_frequency(vocabulary, 0);
  for (const auto w : counts.columns) ++document_frequency[w];
  const auto documents = static_cast<double>(corpus.documents());
  std::vector<double> idf(vocabulary);
  for (std::size_t w = 0; w < vocabulary; ++w)
    idf[w] = document_frequency[w] == 0
                 ? 0.0
                 : std::log(documents / static_cast<double>(document_frequency[w]));

  SparseRows by_document;
  std::vector<std::uint64_t> per_word(vocabulary + 1, 0);
  for (std::size_t d = 0; d < corpus.documents(); ++d) {
    for (auto e = counts.offsets[d]; e < counts.offsets[d + 1]; ++e) {
      const auto w = counts.columns[e];
      const double weight = counts.weights[e] * idf[w];
      if (!(weight > 0)) continue;  // a word in every document: idf 0, no edge
      by_document.columns.push_back(w);
      by_document.weights.push_back(weight);
      ++per_word[w + 1];
    }
    by_document.offsets.push_back(by_document.columns.size());
  }
  SparseRows by_word;  // counting sort by word; documents stay ascending within a word
  for (std::size_t w = 0; w < vocabulary; ++w) per_word[w + 1] += per_word[w];
  by_word.offsets = per_word;
  by_word.columns.resize(by_document.columns.size());
  by_word.weights.resize(by_document.columns.size());
  std::vector<std::uint64_t> next(per_word.begin(), per_word.end() - 1);
  for (std::size_t d = 0; d < corpus.documents(); ++d) {
    for (auto e = by_document.offsets[d]; e < by_document.offsets[d + 1]; ++e) {
      const auto slot = next[by_document.columns[e]]++;
      by_word.columns[slot] = static_cast<std::uint32_t>(d);
      by_word.weights[slot] = by_document.weights[e];
    }
  }
  return {std::move(by_document), std::move(by_word)};
}

struct WindowTotals {
  std::uint64_t windows = 0;
  std::vector<std::uint64_t> word_windows;
};

// Counts windows per word (returned) and per word pair (into `pairs`), documents split among
// the producers' threads in contiguous ranges of about equal words.
WindowTotals count_all_windows(const WordIds& corpus, std::size_t vocabulary, std::size_t window,
                               ExternalPairCounter& pairs, unsigned threads) {
  std::vector<std::size_t> bounds{0};
  const std::uint64_t total = corpus.ids.size();
  for (unsigned t = 1; t < threads; ++t) {
    const std::uint64_t target = total * t / threads;
    std::size_t d = bounds.back();
    while (d < corpus.documents() && corpus.offsets[d] < target) ++d;
    bounds.push_back(d);
  }
  bounds.push_back(corpus.documents());
  std::vector<WindowTotals> partial(threads);
  std::vector<std::exception_ptr> errors(threads);
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      try {
        partial[t].word_windows.assign(vocabulary, 0);
        for (std::size_t d = bounds[t]; d < bounds[t + 1]; ++d)
          partial[t].windows +=
              count_windows(corpus.document(d), window, partial[t].word_windows, pairs.producer(t));
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
  }
  for (auto& worker : workers) worker.join();
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);
  WindowTotals totals = std::move(partial[0]);
  for (unsigned t = 1; t < threads; ++t) {
    totals.windows += partial[t].windows;
    for (std::size_t w = 0; w < vocabulary; ++w)
      totals.word_windows[w] += partial[t].word_windows[w];
  }
  return totals;
}

// One positive-PMI entry of a word's row, spilled in row order.
struct PmiEntry {
  std::uint32_t column;  // word index
  float pmi;
};

struct PositivePmi {
  std::vector<std::uint64_t> per_word;  // entries in each word's row
  std::vector<double> row_sum;          // their PMI total (the word's degree share)
  std::uint64_t entries = 0;
};

// Merges the pair counts into PMI; writes the positive ones, row by row, to `scratch`.
PositivePmi positive_pmi(ExternalPairCounter& pairs, const WindowTotals& totals,
                         std::size_t vocabulary, const std::filesystem::path& scratch) {
  PositivePmi pmi;
  pmi.per_word.assign(vocabulary, 0);
  pmi.row_sum.assign(vocabulary, 0.0);
  util::ChecksummedFileWriter out(scratch, 1 << 20, /*compute_checksum=*/false);
  const auto windows = static_cast<double>(totals.windows);
  pairs.merge([&](std::uint64_t key, std::uint64_t count) {
    const auto a = pair_first(key);
    const auto b = pair_second(key);
    const double value = std::log(static_cast<double>(count) * windows /
                                  (static_cast<double>(totals.word_windows[a]) *
                                   static_cast<double>(totals.word_windows[b])));
    if (!(value > 0)) return;
    const PmiEntry entry{b, static_cast<float>(value)};
    out.write_values(std::span<const PmiEntry>(&entry, 1));
    ++pmi.per_word[a];
    pmi.row_sum[a] += static_cast<float>(value);
    ++pmi.entries;
  });
  out.close(/*durable=*/false);
  return pmi;
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// Writes the CSR of D^-1/2 (A + I) D^-1/2: documents' rows, then words'.
std::uint64_t write_adjacency(store::NodeGraphStoreBuilder& builder, const SparseRows& by_document,
                              const SparseRows& by_word, const PositivePmi& pmi,
                              const std::filesystem::path& pmi_scratch) {
  const std::size_t documents = by_document.offsets.size() - 1;
  const std::size_t vocabulary = by_word.offsets.size() - 1;
  std::vector<double> degree(documents + vocabulary, 1.0);  // the self-loop
  for (std::size_t d = 0; d < documents; ++d)
    for (auto e = by_document.offsets[d]; e < by_document.offsets[d + 1]; ++e)
      degree[d] += by_document.weights[e];
  for (std::size_t w = 0; w < vocabulary; ++w) {
    for (auto e = by_word.offsets[w]; e < by_word.offsets[w + 1]; ++e)
      degree[documents + w] += by_word.weights[e];
    degree[documents + w] += pmi.row_sum[w];
  }
  std::vector<double> inverse_sqrt(degree.size());
  for (std::size_t i = 0; i < degree.size(); ++i) inverse_sqrt[i] = 1.0 / std::sqrt(degree[i]);

  auto& offsets = builder.array(store::node_graph_arrays::kRowOffsets);
  auto& columns = builder.array(store::node_graph_arrays::kColumnIndex);
  auto& weights = builder.array(store::node_graph_arrays::kEdgeWeight);
  std::int64_t stored = 0;
  offsets.write_values(std::span<const std::int64_t>(&stored, 1));
  std::vector<std::int32_t> row_columns;
  std::vector<float> row_weights;
  const auto put = [&](std::size_t row, std::size_t column, double weight) {
    row_columns.push_back(static_cast<std::int32_t>(column));
    row_weights.push_back(static_cast<float>(weight * inverse_sqrt[row] * inverse_sqrt[column]));
  };
  const auto end_row = [&] {
    columns.write_values(std::span<const std::int32_t>(row_columns));
    weights.write_values(std::span<const float>(row_weights));
    stored += static_cast<std::int64_t>(row_columns.size());
    offsets.write_values(std::span<const std::int64_t>(&stored, 1));
    row_columns.clear();
    row_weights.clear();
  };
  for (std::size_t d = 0; d < documents; ++d) {
    put(d, d, 1.0);
    for (auto e = by_document.offsets[d]; e < by_document.offsets[d + 1]; ++e)
      put(d, documents + by_document.columns[e], by_document.weights[e]);
    end_row();
  }
  std::unique_ptr<std::FILE, FileCloser> spilled(std::fopen(pmi_scratch.c_str(), "rb"));
  if (!spilled) throw std::runtime_error("cannot reopen " + util::printable_path(pmi_scratch));
  std::vector<PmiEntry> row;
  for (std::size_t w = 0; w < vocabulary; ++w) {
    const std::size_t node = documents + w;
    for (auto e = by_word.offsets[w]; e < by_word.offsets[w + 1]; ++e)
      put(node, by_word.columns[e], by_word.weights[e]);
    row.resize(pmi.per_word[w]);
    if (!row.empty() &&
        std::fread(row.data(), sizeof(PmiEntry), row.size(), spilled.get()) != row.size())
      throw std::runtime_error("PMI scratch file " + util::printable_path(pmi_scratch) +
                               " is truncated");
    bool self_loop_done = false;
    for (const PmiEntry& entry : row) {
      if (!self_loop_done && entry.column > w) {
        put(node, node, 1.0);
        self_loop_done = true;
      }
      put(node, documents + entry.column, entry.pmi);
    }
    if (!self_loop_done) put(node, node, 1.0);
    end_row();
  }
  return static_cast<std::uint64_t>(stored);
}

void write_node_arrays(store::NodeGraphStoreBuilder& builder, const CorpusLabels& labels,
                       const store::TrainValidationSplit& split, std::size_t vocabulary) {
  const std::size_t documents = labels.size();
  std::vector<std::uint8_t> kind(documents + vocabulary, kWordKind);
  std::fill(kind.begin(), kind.begin() + static_cast<std::ptrdiff_t>(documents), kDocumentKind);
  std::vector<std::int32_t> label(documents + vocabulary, store::kNoLabel);
  std::copy(labels.label.begin(), labels.label.end(), label.begin());
  std::vector<std::uint8_t> node_split(documents + vocabulary,
                                       static_cast<std::uint8_t>(store::NodeSplit::kNone));
  for (std::size_t d = 0; d < documents; ++d)
    if (labels.is_test[d]) node_split[d] = static_cast<std::uint8_t>(store::NodeSplit::kTest);
  for (const auto d : split.train)
    node_split[d] = static_cast<std::uint8_t>(store::NodeSplit::kTrain);
  for (const auto d : split.validation)
    node_split[d] = static_cast<std::uint8_t>(store::NodeSplit::kValidation);
  builder.array(store::node_graph_arrays::kNodeKind)
      .write_values(std::span<const std::uint8_t>(kind));
  builder.array(store::node_graph_arrays::kNodeLabel)
      .write_values(std::span<const std::int32_t>(label));
  builder.array(store::node_graph_arrays::kNodeSplit)
      .write_values(std::span<const std::uint8_t>(node_split));
}

nlohmann::json build_record(const TextGraphReport& r, const TextGraphOptions& o) {
  return {
      {"builder", "text"},
      {"corpus_file", r.text.file.filename().string()},
      {"encoding", encoding_name(r.text.encoding)},
      {"bytes_above_7f", r.text.bytes_above_7f},
      {"crlf_lines", r.text.crlf_lines},
      {"lf_lines", r.text.lf_lines},
      {"cleaning", r.cleaned ? "kim" : "none (already cleaned)"},
      {"stop_words", r.stop_words_removed ? "removed" : "kept"},
      {"stop_word_list", fmt::format("English, {} words (NLTK's list)", english_stop_word_count())},
      {"min_count", r.min_count},
      {"window", o.window},
      {"words_before_filter", r.words_before_filter},
      {"tokens", r.tokens},
      {"windows", r.windows},
      {"edges",
       {{"document-word", r.document_word_edges},
        {"word-word", r.word_word_edges},
        {"self-loop", r.documents + r.vocabulary}}},
      {"weights",
       "TF-IDF (document-word), positive PMI (word-word), self-loops 1; "
       "normalised D^-1/2 (A+I) D^-1/2"},
      {"summary", r.summary_lines()}};
}

}  // namespace

std::vector<std::string> TextGraphReport::summary_lines() const {
  return {
      text.describe(),
      fmt::format("words: {} distinct {}; {} kept (stop words {}, seen at least {} times); {} "
                  "words in {} windows",
                  with_thousands(words_before_filter),
                  cleaned ? "after Kim's cleaning" : "as cleaned", with_thousands(vocabulary),
                  stop_words_removed ? "removed" : "kept", min_count, with_thousands(tokens),
                  with_thousands(windows)),
      fmt::format("graph: {} nodes ({} documents, {} words); edges {} document-word (TF-IDF), {} "
                  "word-word (positive PMI), {} self-loops; {} stored",
                  with_thousands(documents + vocabulary), with_thousands(documents),
                  with_thousands(vocabulary), with_thousands(document_word_edges),
                  with_thousands(word_word_edges), with_thousands(documents + vocabulary),
                  with_thousands(stored_edges)),
      fmt::format("split: {} train, {} validation, {} test documents; {} classes",
                  with_thousands(train), with_thousands(validation), with_thousands(test), classes),
  };
}

TextGraphReport build_text_graph_store(const std::filesystem::path& corpus_directory,
                                       const std::filesystem::path& store_path,
                                       const TextGraphOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (options.window == 0) throw std::invalid_argument("the window must hold at least one word");
  const CorpusFiles files = locate_corpus_files(corpus_directory, options.source);
  const CorpusLabels labels = read_corpus_labels(files.labels);
  TextGraphReport report;
  report.text = scan_corpus_text(files.text);
  check_document_count(files, labels, report.text);
  store::NodeGraphStoreBuilder builder(store_path, options.overwrite, options.when_locked);

  report.cleaned = !files.text_is_clean;
  Tokenized tokens = tokenize(report.text, report.cleaned);
  report.documents = tokens.corpus.documents();
  report.words_before_filter = tokens.words.size();
  const double mean_words = report.documents == 0 ? 0.0
                                                  : static_cast<double>(tokens.corpus.ids.size()) /
                                                        static_cast<double>(report.documents);
  report.stop_words_removed = options.stop_words == StopWords::kRemove ||
                              (options.stop_words == StopWords::kAuto && report.cleaned &&
                               mean_words >= kShortDocumentWords);
  report.min_count = options.min_count.value_or(report.stop_words_removed ? 5U : 1U);
  std::vector<std::string> vocabulary =
      filter_vocabulary(tokens, report.stop_words_removed, report.min_count);
  const WordIds& corpus = tokens.corpus;
  report.vocabulary = vocabulary.size();
  report.tokens = corpus.ids.size();
  if (report.documents + report.vocabulary > static_cast<std::uint64_t>(INT32_MAX))
    throw std::runtime_error("the graph would have more nodes than int32 column indices number");

  const auto [by_document, by_word] = tf_idf(corpus, vocabulary.size());
  report.document_word_edges = by_document.columns.size();

  const unsigned threads = options.threads == 0 ? util::usable_cores() : options.threads;
  ExternalPairCounter pairs(options.count_memory_bytes, threads, builder.scratch_path("pairs"));
  const WindowTotals totals =
      count_all_windows(corpus, vocabulary.size(), options.window, pairs, threads);
  report.windows = totals.windows;
  const auto pmi_scratch = builder.scratch_path("pmi");
  const PositivePmi pmi = positive_pmi(pairs, totals, vocabulary.size(), pmi_scratch);
  report.counting = pairs.statistics();
  report.word_word_edges = pmi.entries / 2;
  report.stored_edges = write_adjacency(builder, by_document, by_word, pmi, pmi_scratch);

  std::vector<std::uint32_t> training;
  for (std::uint32_t d = 0; d < labels.size(); ++d)
    if (!labels.is_test[d]) training.push_back(d);
  const auto split =
      store::split_train_validation(training, options.validation_fraction, options.seed);
  write_node_arrays(builder, labels, split, vocabulary.size());
  report.train = split.train.size();
  report.validation = split.validation.size();
  report.test = labels.size() - training.size();
  report.classes = labels.classes.size();

  store::NodeGraphMetadata metadata;
  metadata.created_by = std::string("headroom ") + HEADROOM_VERSION;
  // Absolute: `headroom run` compares it with the corpus it is given, from any directory.
  metadata.source = std::filesystem::absolute(corpus_directory).lexically_normal().string();
  metadata.num_nodes = report.documents + report.vocabulary;
  metadata.num_edges = report.stored_edges;
  metadata.node_kinds = {"document", "word"};
  metadata.classes = labels.classes;
  metadata.node_names = labels.document_names;
  for (auto& word : vocabulary) metadata.node_names.push_back(std::move(word));
  metadata.validation_fraction = options.validation_fraction;
  metadata.validation_seed = options.seed;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  metadata.build = build_record(report, options);
  builder.commit(std::move(metadata));
  return report;
}

}  // namespace headroom::text
