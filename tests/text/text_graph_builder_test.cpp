#include "headroom/text/text_graph_builder.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "headroom/store/node_graph_store.hpp"
#include "test_support.hpp"

namespace headroom::text {
namespace {

using testing::TempDir;
using testing::write_text_file;

// The adjacency as a map (row, column) -> weight.
std::map<std::pair<int, int>, double> entries_of(const store::NodeGraphStore& store) {
  std::map<std::pair<int, int>, double> entries;
  const auto rows = store.row_offsets();
  for (std::size_t i = 0; i < store.num_nodes(); ++i)
    for (auto e = rows[i]; e < rows[i + 1]; ++e)
      entries[{static_cast<int>(i), store.column_index()[static_cast<std::size_t>(e)]}] =
          store.edge_weight()[static_cast<std::size_t>(e)];
  return entries;
}

// Three documents, already cleaned (so nothing is filtered), each shorter than a window (one
// window each). Worked by hand in the comments; the test recomputes nothing with the builder's
// code.
class TinyCorpus : public ::testing::Test {
 protected:
  void SetUp() override {
    write_text_file(dir_ / "corpus/labels.tsv",
                    "index\tsplit\tlabel\nd0\ttrain\tx\nd1\ttrain\ty\nd2\ttest\tx\n");
    write_text_file(dir_ / "corpus/corpus.clean.txt", "a b c e a\na b e\nc d e\n");
    TextGraphOptions options;
    options.threads = 2;
    report_ = build_text_graph_store(dir_ / "corpus", dir_ / "store", options);
  }
  TempDir dir_;
  TextGraphReport report_;
};

TEST_F(TinyCorpus, NodesLabelsAndSplit) {
  const auto store = store::NodeGraphStore::open(dir_ / "store", store::StoreVerification::kFull);
  // Nodes: d0 d1 d2, then the words sorted: a b c d e.
  ASSERT_EQ(store.num_nodes(), 8U);
  EXPECT_EQ(store.metadata().node_names,
            (std::vector<std::string>{"d0", "d1", "d2", "a", "b", "c", "d", "e"}));
  EXPECT_EQ(store.metadata().classes, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(std::vector<std::uint8_t>(store.node_kind().begin(), store.node_kind().end()),
            (std::vector<std::uint8_t>{0, 0, 0, 1, 1, 1, 1, 1}));
  EXPECT_EQ(std::vector<std::int32_t>(store.node_label().begin(), store.node_label().end()),
            (std::vector<std::int32_t>{0, 1, 0, -1, -1, -1, -1, -1}));
  // 10% of two training documents rounds to none held out.
  EXPECT_EQ(std::vector<std::uint8_t>(store.node_split().begin(), store.node_split().end()),
            (std::vector<std::uint8_t>{1, 1, 3, 0, 0, 0, 0, 0}));
  EXPECT_EQ(report_.windows, 3U);
}

TEST_F(TinyCorpus, ExactTfIdfPmiSelfLoopsAndNormalisation) {
  const auto store = store::NodeGraphStore::open(dir_ / "store", store::StoreVerification::kFull);
  const auto entries = entries_of(store);
  enum { d0, d1, d2, a, b, c, d, e };
  // TF-IDF, 3 documents: a, b, c are in 2 (idf log 3/2), d in 1 (idf log 3), e in all 3 (idf 0:
  // no edge). a occurs twice in d0 (tf 2).
  const double L = std::log(1.5);
  const double L3 = std::log(3.0);
  // PMI, 3 windows: #W(a)=#W(b)=#W(c)=2, #W(d)=1, #W(e)=3.
  // (a,b) 2 windows: log(2*3/(2*2)) = L > 0 -> edge. (c,d) 1: log(1*3/(2*1)) = L -> edge.
  // (a,c), (b,c) 1: log(3/4) < 0 -> none. (a,e) 2: log(2*3/(2*3)) = 0 -> none; (d,e) 1:
  // log(3/3) = 0 -> none; (b,e), (c,e) likewise 0.
  const std::map<std::pair<int, int>, double> raw = {{{d0, a}, 2 * L}, {{d0, b}, L}, {{d0, c}, L},
                                                     {{d1, a}, L},     {{d1, b}, L}, {{d2, c}, L},
                                                     {{d2, d}, L3},    {{a, b}, L},  {{c, d}, L}};
  // Degrees: row sums of A + I.
  const std::map<int, double> degree = {{d0, 1 + 4 * L}, {d1, 1 + 2 * L}, {d2, 1 + L + L3},
                                        {a, 1 + 4 * L},  {b, 1 + 3 * L},  {c, 1 + 3 * L},
                                        {d, 1 + L3 + L}, {e, 1.0}};
  std::map<std::pair<int, int>, double> expected;
  for (const auto& [edge, weight] : raw) {
    const double normalised = weight / std::sqrt(degree.at(edge.first) * degree.at(edge.second));
    expected[edge] = normalised;
    expected[{edge.second, edge.first}] = normalised;
  }
  for (int node = d0; node <= e; ++node) expected[{node, node}] = 1.0 / degree.at(node);

  ASSERT_EQ(entries.size(), expected.size()) << "an edge is missing or one that must be absent "
                                                "(zero or negative PMI, idf 0) is there";
  for (const auto& [edge, weight] : expected) {
    const auto it = entries.find(edge);
    ASSERT_NE(it, entries.end()) << "no edge " << edge.first << "-" << edge.second;
    EXPECT_NEAR(it->second, weight, 1e-6) << "edge " << edge.first << "-" << edge.second;
  }
  for (const auto& absent : std::vector<std::pair<int, int>>{
           {a, c}, {b, c}, {a, e}, {d, e}, {b, e}, {c, e}, {d0, e}, {d1, e}, {d2, e}, {d0, d1}})
    EXPECT_EQ(entries.count(absent), 0U) << absent.first << "-" << absent.second;
  EXPECT_EQ(report_.document_word_edges, 7U);
  EXPECT_EQ(report_.word_word_edges, 2U);
  EXPECT_EQ(store.num_edges(), 8U + 2 * 7 + 2 * 2);
}

TEST(TextGraphBuilder, RawCorpusIsCleanedAndFilteredAsAsked) {
  TempDir dir;
  write_text_file(dir / "c/labels.tsv", "index\tsplit\tlabel\n0\ttrain\tp\n1\ttest\tq\n");
  // Kim's cleaning: "Don't" -> do n't; the comma is a word; "The" is a stop word.
  write_text_file(dir / "c/corpus.txt", "The cat, Don't!\nthe dog's cat\n");
  TextGraphOptions options;
  options.stop_words = StopWords::kRemove;
  options.min_count = 1;
  build_text_graph_store(dir / "c", dir / "s", options);
  const auto store = store::NodeGraphStore::open(dir / "s");
  EXPECT_EQ(store.metadata().node_names,
            (std::vector<std::string>{"0", "1", "!", "'s", ",", "cat", "dog", "n't"}));
  options.stop_words = StopWords::kKeep;
  options.min_count = 2;  // only "the" (2) and "cat" (2) are seen twice
  options.overwrite = true;
  build_text_graph_store(dir / "c", dir / "s", options);
  EXPECT_EQ(store::NodeGraphStore::open(dir / "s").metadata().node_names,
            (std::vector<std::string>{"0", "1", "cat", "the"}));
}

}  // namespace
}  // namespace headroom::text
