// The documents' TF-IDF read back from a text corpus's node-graph store, against TF-IDF counted
// here from the corpus's own words.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "headroom/store/document_tfidf.hpp"
#include "headroom/text/text_graph_builder.hpp"
#include "test_support.hpp"

namespace headroom::store {
namespace {

// Cleaned text (split at spaces only, every word kept). "the" is in every document: idf 0.
const std::vector<std::string> kDocuments = {
    "the apple apple banana cherry",
    "the banana date date",
    "the apple cherry cherry egg",
    "the date egg fig banana fig fig",
};

NodeGraphStore build_store(const testing::TempDir& dir) {
  testing::write_text_file(dir / "corpus" / "labels.tsv",
                           "index\tsplit\tlabel\nd0\ttrain\ta\nd1\ttrain\tb\nd2\ttest\ta\n"
                           "d3\ttest\tb\n");
  std::string corpus;
  for (const auto& document : kDocuments) corpus += document + "\n";
  testing::write_text_file(dir / "corpus" / "corpus.clean.txt", corpus);
  text::TextGraphOptions options;
  options.threads = 1;
  options.validation_fraction = 0;
  text::build_text_graph_store(dir / "corpus", dir / "store", options);
  return NodeGraphStore::open(dir / "store");
}

// Unit-length TF-IDF of each document by word, from the text: tf the count, idf log(D / df).
std::vector<std::map<std::string, double>> expected_tfidf() {
  std::vector<std::map<std::string, double>> counts(kDocuments.size());
  std::map<std::string, double> containing;
  for (std::size_t d = 0; d < kDocuments.size(); ++d) {
    std::istringstream words(kDocuments[d]);
    for (std::string word; words >> word;) counts[d][word] += 1;
    for (const auto& [word, count] : counts[d]) containing[word] += 1;
  }
  for (auto& document : counts) {
    double squared = 0;
    for (auto& [word, value] : document) {
      value *= std::log(static_cast<double>(kDocuments.size()) / containing[word]);
      squared += value * value;
    }
    for (auto& [word, value] : document) value /= std::sqrt(squared);
    std::erase_if(document, [](const auto& entry) { return entry.second == 0; });
  }
  return counts;
}

TEST(DocumentTfidf, ReadsBackTheCorpusTfIdfFromTheNormalisedGraph) {
  testing::TempDir dir;
  const auto store = build_store(dir);
  ASSERT_TRUE(holds_documents_and_words(store));
  // Rows in the order asked for, not node order.
  const std::vector<std::uint32_t> documents = {3, 0, 2, 1};
  const auto rows = document_tfidf(store, documents);
  ASSERT_EQ(rows.num_rows(), documents.size());
  const auto& names = store.metadata().node_names;
  std::vector<std::string> vocabulary;  // column j: the j-th word node
  for (std::size_t node = kDocuments.size(); node < store.num_nodes(); ++node)
    vocabulary.push_back(names[node]);
  EXPECT_EQ(rows.num_columns, vocabulary.size());
  const auto expected = expected_tfidf();
  for (std::size_t r = 0; r < rows.num_rows(); ++r) {
    std::map<std::string, double> read;
    for (auto e = rows.offsets[r]; e < rows.offsets[r + 1]; ++e) {
      if (e > rows.offsets[r]) {
        EXPECT_LT(rows.columns[e - 1], rows.columns[e]);
      }
      read[vocabulary.at(static_cast<std::size_t>(rows.columns[e]))] = rows.values[e];
    }
    const auto& want = expected[documents[r]];
    ASSERT_EQ(read.size(), want.size()) << "document " << documents[r];
    for (const auto& [word, value] : want) {
      ASSERT_TRUE(read.contains(word)) << word << " in document " << documents[r];
      EXPECT_NEAR(read[word], value, 1e-5) << word << " in document " << documents[r];
    }
    EXPECT_FALSE(read.contains("the"));  // idf 0: no edge, no entry
  }
}

TEST(DocumentTfidf, RefusesAWordWhereADocumentIsAsked) {
  testing::TempDir dir;
  const auto store = build_store(dir);
  const std::vector<std::uint32_t> a_word = {static_cast<std::uint32_t>(kDocuments.size())};
  EXPECT_THROW(document_tfidf(store, a_word), std::invalid_argument);
  const std::vector<std::uint32_t> outside = {static_cast<std::uint32_t>(store.num_nodes())};
  EXPECT_THROW(document_tfidf(store, outside), std::invalid_argument);
}

}  // namespace
}  // namespace headroom::store
