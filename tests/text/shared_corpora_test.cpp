// The three TextGCN corpora in ../shared/data/text (skipped when absent): document, split and
// class counts, the vocabulary against the paper's Table 1, and our cleaning of mr's raw text
// against the cleaned file that ships with it.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "headroom/store/node_graph_store.hpp"
#include "headroom/text/corpus_text.hpp"
#include "headroom/text/text_cleaning.hpp"
#include "headroom/text/text_graph_builder.hpp"
#include "test_support.hpp"

namespace headroom::text {
namespace {

std::filesystem::path corpus_dir(const std::string& name) {
  return testing::shared_data_dir() / "text" / name;
}

#define REQUIRE_CORPUS(name)             \
  HEADROOM_REQUIRE_SHARED_DATA();        \
  if (!is_text_corpus(corpus_dir(name))) \
  GTEST_SKIP() << "../shared/data/text/" << name << " is absent: corpus test skipped"

struct Expected {
  std::uint64_t documents, train, test, classes;
  std::uint64_t paper_words;  // Table 1 of the TextGCN paper
  double tolerance;           // how far our vocabulary may be from it (share)
};

void check_corpus(const std::string& name, const Expected& expected,
                  CorpusSource source = CorpusSource::kAuto) {
  testing::TempDir dir;
  TextGraphOptions options;
  options.threads = 2;
  options.source = source;
  const auto report = build_text_graph_store(corpus_dir(name), dir / "store", options);
  const auto store = store::NodeGraphStore::open(dir / "store");
  EXPECT_EQ(report.documents, expected.documents);
  EXPECT_EQ(store.nodes_in(store::NodeSplit::kTest).size(), expected.test);
  const auto validation = store.nodes_in(store::NodeSplit::kValidation).size();
  EXPECT_EQ(store.nodes_in(store::NodeSplit::kTrain).size() + validation, expected.train);
  EXPECT_EQ(validation,
            static_cast<std::size_t>(std::llround(0.1 * static_cast<double>(expected.train))));
  EXPECT_EQ(store.metadata().classes.size(), expected.classes);
  EXPECT_EQ(store.num_nodes(), report.documents + report.vocabulary);
  const double off =
      std::abs(static_cast<double>(report.vocabulary) - static_cast<double>(expected.paper_words)) /
      static_cast<double>(expected.paper_words);
  std::cout << name << ": " << report.vocabulary << " words (paper " << expected.paper_words << ", "
            << std::round(off * 10000) / 100 << "% off), " << store.num_nodes() << " nodes, "
            << report.document_word_edges << " document-word and " << report.word_word_edges
            << " word-word edges, " << report.seconds << " s\n";
  for (const auto& line : report.summary_lines()) std::cout << "  " << line << "\n";
  EXPECT_LE(off, expected.tolerance) << name << ": " << report.vocabulary << " words";
}

TEST(SharedTextCorpora, R8) {
  REQUIRE_CORPUS("r8");
  check_corpus("r8", {7674, 5485, 2189, 8, 7688, 0.0});
}

TEST(SharedTextCorpora, Mr) {
  REQUIRE_CORPUS("mr");
  check_corpus("mr", {10662, 7108, 3554, 2, 18764, 0.0});
  // From the raw Windows-1252 text, cleaned here: short texts, so stop words and rare words stay
  // (the paper's treatment of mr), and the same vocabulary.
  check_corpus("mr", {10662, 7108, 3554, 2, 18764, 0.0}, CorpusSource::kRaw);
}

TEST(SharedTextCorpora, TwentyNewsgroups) {
  REQUIRE_CORPUS("20ng");
  check_corpus("20ng", {18846, 11314, 7532, 20, 42757, 0.0});
}

// mr ships its raw text (Windows-1252, CRLF) and the cleaned text TextGCN used: our decoding and
// Kim cleaning of the one should give the other.
TEST(SharedTextCorpora, MrCleaningMatchesTheCleanedFile) {
  REQUIRE_CORPUS("mr");
  const auto raw = scan_corpus_text(corpus_dir("mr") / "corpus.txt");
  EXPECT_EQ(raw.encoding, TextEncoding::kWindows1252);
  EXPECT_EQ(raw.crlf_lines, 10662U);
  std::cout << raw.describe() << "\n";
  std::vector<std::vector<std::string>> ours;
  read_corpus_documents(raw, [&](std::uint64_t, std::string_view text) {
    ours.emplace_back();
    clean_words_kim(text, ours.back());
  });
  const auto clean = scan_corpus_text(corpus_dir("mr") / "corpus.clean.txt");
  std::size_t same = 0, words = 0, same_words = 0, line = 0;
  read_corpus_documents(clean, [&](std::uint64_t, std::string_view text) {
    std::vector<std::string> theirs;
    split_words(text, theirs);
    ASSERT_LT(line, ours.size());
    const auto& mine = ours[line++];
    same += mine == theirs;
    words += theirs.size();
    for (std::size_t i = 0; i < std::min(mine.size(), theirs.size()); ++i)
      same_words += mine[i] == theirs[i];
    if (mine != theirs && line - same <= 3) {
      std::cout << "differs at line " << line << ":\n  ours:   ";
      for (const auto& w : mine) std::cout << w << ' ';
      std::cout << "\n  theirs: ";
      for (const auto& w : theirs) std::cout << w << ' ';
      std::cout << "\n";
    }
  });
  EXPECT_EQ(line, ours.size());
  std::cout << "mr cleaning: " << same << " of " << line << " documents identical, " << same_words
            << " of " << words << " words in place\n";
  EXPECT_EQ(same, line);
}

}  // namespace
}  // namespace headroom::text
