#include "headroom/text/corpus_text.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <vector>

#include "headroom/store/node_graph_store.hpp"
#include "headroom/text/text_corpus.hpp"
#include "headroom/text/text_graph_builder.hpp"
#include "test_support.hpp"

namespace headroom::text {
namespace {

using testing::TempDir;
using testing::write_text_file;

std::vector<std::string> documents_of(const CorpusTextReport& report) {
  std::vector<std::string> documents;
  read_corpus_documents(report, [&](std::uint64_t line, std::string_view text) {
    EXPECT_EQ(line, documents.size() + 1);
    documents.emplace_back(text);
  });
  return documents;
}

TEST(CorpusText, Windows1252WithCrlfAndNelInsideLines) {
  TempDir dir;
  // Three documents as mr's file holds them: CRLF ends, 0x85 ('...', NEL to a Latin-1 reader)
  // and 0x92 (a right quote) inside lines, 0xE9 (e acute).
  write_text_file(dir / "corpus.txt",
                  "it\x92s good \x85 really\r\ncaf\xe9\r\nthe end \x93quoted\x94\x85\r\n");
  const auto report = scan_corpus_text(dir / "corpus.txt");
  EXPECT_EQ(report.encoding, TextEncoding::kWindows1252);
  EXPECT_EQ(report.documents, 3U);
  EXPECT_EQ(report.crlf_lines, 3U);
  EXPECT_EQ(report.bytes_above_7f, 6U);
  EXPECT_EQ(report.describe(),
            "corpus.txt: Windows-1252 (6 bytes above 0x7F), CRLF line ends; 3 documents");
  EXPECT_EQ(documents_of(report),
            (std::vector<std::string>{"it\u2019s good \u2026 really", "caf\u00e9",
                                      "the end \u201cquoted\u201d\u2026"}));
}

TEST(CorpusText, Utf8IsKeptAndALastLineWithoutNewlineCounts) {
  TempDir dir;
  write_text_file(dir / "corpus.txt", "\xEF\xBB\xBFna\xC3\xAFve\n\ncaf\xC3\xA9");
  const auto report = scan_corpus_text(dir / "corpus.txt");
  EXPECT_EQ(report.encoding, TextEncoding::kUtf8);
  EXPECT_TRUE(report.byte_order_mark);
  EXPECT_EQ(report.documents, 3U);  // the empty line is an (empty) document
  EXPECT_EQ(documents_of(report), (std::vector<std::string>{"na\u00efve", "", "caf\u00e9"}));
}

TEST(CorpusText, UndefinedWindows1252BytesBecomeC1Controls) {
  EXPECT_EQ(decode_windows_1252("\x81\x8d\x80\xff"), "\u0081\u008d\u20ac\u00ff");
}

TEST(CorpusText, DocumentCountMismatchNamesFileAndLine) {
  TempDir dir;
  write_text_file(dir / "c/labels.tsv", "index\tsplit\tlabel\n0\ttrain\ta\n1\ttest\tb\n");
  write_text_file(dir / "c/corpus.txt", "one\r\ntwo \x85 still two\r\nthree\r\n");
  try {
    build_text_graph_store(dir / "c", dir / "s", {});
    FAIL() << "three documents for two rows must fail";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("corpus.txt:3: document 3 has no row in"),
              std::string::npos)
        << e.what();
  }
  write_text_file(dir / "c/corpus.txt", "only one \x85 document\r\n");
  try {
    build_text_graph_store(dir / "c", dir / "s", {});
    FAIL() << "one document for two rows must fail";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("labels.tsv:3: row of document 2, but"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "s")) << "no store after an error";
}

// Writes `content` as dir/labels.tsv and expects reading it to fail with `expected` in the message.
void expect_labels_refused(const std::filesystem::path& dir, const std::string& content,
                           const std::string& expected) {
  write_text_file(dir / "labels.tsv", content);
  try {
    read_corpus_labels(dir / "labels.tsv");
    ADD_FAILURE() << "accepted: " << content;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

TEST(CorpusLabels, BadRowsNameFileLineAndReason) {
  TempDir dir;
  const auto check = [&](const std::string& content, const std::string& expected) {
    expect_labels_refused(dir.path(), content, expected);
  };
  check("index,split,label\n", "labels.tsv:1: header is");
  check("index\tsplit\tlabel\n0\ttrain\n", "labels.tsv:2: expected three tab-separated fields");
  check("index\tsplit\tlabel\n0\ttrain\ta\n1\tdev\tb\n", "labels.tsv:3: split 'dev' is neither");
  check("index\tsplit\tlabel\n0\ttrain\ta\n\n1\ttest\tb\n", "labels.tsv:3: blank line");
  check("index\tsplit\tlabel\n0\ttrain\t\n", "labels.tsv:2: empty label");
  const auto labels = [&] {
    write_text_file(dir / "labels.tsv", "index\tsplit\tlabel\r\n0\ttrain\tz\r\n1\ttest\ta\r\n\r\n");
    return read_corpus_labels(dir / "labels.tsv");
  }();
  EXPECT_EQ(labels.classes, (std::vector<std::string>{"a", "z"}));
  EXPECT_EQ(labels.label, (std::vector<std::int32_t>{1, 0}));
  EXPECT_EQ(labels.is_test, (std::vector<bool>{false, true}));
}

// labels.tsv sorted by split, each row keeping its index, used to give document i the label of
// the i-th row: r8's test accuracy fell from 1.00 to 0.50 without a word. Numbered rows are
// joined on their index; a repeated index, or a number past the last document, is refused.
// (Mutation seen to fail: rows_in_document_order returning the file order.)
TEST(CorpusLabels, NumberedRowsAreJoinedOnTheirIndexAndMustNameEachDocumentOnce) {
  TempDir dir;
  write_text_file(dir / "labels.tsv",
                  "index\tsplit\tlabel\n2\ttest\tc\n0\ttrain\ta\n3\ttest\ta\n1\ttrain\tb\n");
  const auto sorted = read_corpus_labels(dir / "labels.tsv");
  EXPECT_EQ(sorted.document_names, (std::vector<std::string>{"0", "1", "2", "3"}));
  EXPECT_EQ(sorted.label, (std::vector<std::int32_t>{0, 1, 2, 0}));  // a, b, c, a
  EXPECT_EQ(sorted.is_test, (std::vector<bool>{false, false, true, true}));
  // Names are not numbers: the file's order is the corpus's.
  write_text_file(dir / "labels.tsv", "index\tsplit\tlabel\nd1\ttrain\tb\nd0\ttest\ta\n");
  EXPECT_EQ(read_corpus_labels(dir / "labels.tsv").document_names,
            (std::vector<std::string>{"d1", "d0"}));
  const auto refused = [&](const std::string& content, const std::string& expected) {
    expect_labels_refused(dir.path(), content, expected);
  };
  refused("index\tsplit\tlabel\n7\ttrain\ta\n7\ttest\tb\n",
          "labels.tsv:3: index '7' is also on line 2");
  refused("index\tsplit\tlabel\nd\ttrain\ta\nd\ttest\tb\n", "labels.tsv:3: index 'd' is also");
  // One odd index among numbers once sent the whole file back to file order, silently.
  for (const char* odd : {" 1", "1 ", "-1", "0x1", "1e0"})
    refused(fmt::format("index\tsplit\tlabel\n0\ttrain\ta\n{}\ttest\tb\n", odd),
            fmt::format("labels.tsv:3: index '{}' is not a document number", odd));
  refused("index\tsplit\tlabel\n1\ttrain\ta\n2\ttest\tb\n",  // numbered from 1: a gap at 0
          "labels.tsv:3: index 2 is past the last document: the 2 rows number the corpus's "
          "documents from 0 to 1");
}

}  // namespace
}  // namespace headroom::text
