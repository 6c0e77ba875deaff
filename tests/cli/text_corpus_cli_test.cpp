// `headroom preprocess` on a text corpus and `headroom inspect` on the node-graph store it writes,
// through the real binary.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace headroom {
namespace {

using testing::run_command;
using testing::TempDir;
using testing::write_text_file;

std::string headroom(const std::string& args) {
  return fmt::format("'{}' {} 2>&1", HEADROOM_BINARY, args);
}

void write_corpus(const std::filesystem::path& dir) {
  write_text_file(dir / "labels.tsv",
                  "index\tsplit\tlabel\n0\ttrain\tpos\n1\ttrain\tneg\n2\ttest\tpos\n");
  // Windows-1252 with CRLF, 0x85 inside a line: three documents, not four.
  write_text_file(dir / "corpus.txt",
                  "A fine film \x85 truly fine.\r\nA dull film, isn't it?\r\nFine \x93"
                  "acting\x94.\r\n");
}

TEST(TextCorpusCli, PreprocessBuildsTheGraphAndInspectSummarisesIt) {
  TempDir dir;
  write_corpus(dir / "corpus");
  const std::string store = (dir / "store").string();
  std::string output;
  ASSERT_EQ(run_command(headroom(fmt::format("preprocess '{}' --out '{}' --threads 2",
                                             (dir / "corpus").string(), store)),
                        &output),
            0)
      << output;
  EXPECT_NE(output.find("corpus.txt: Windows-1252 (3 bytes above 0x7F), CRLF line ends; 3 "
                        "documents"),
            std::string::npos)
      << output;
  // Short texts: stop words kept, every word kept.
  EXPECT_NE(output.find("stop words kept, seen at least 1 times"), std::string::npos) << output;
  ASSERT_EQ(run_command(headroom(fmt::format("inspect '{}' --verify", store)), &output), 0)
      << output;
  EXPECT_NE(output.find("(node graph: one graph, nodes classified)"), std::string::npos) << output;
  // Words: a dull film fine , is n't it \? acting truly -> 11.
  EXPECT_NE(output.find("nodes      14: 3 document, 11 word"), std::string::npos) << output;
  EXPECT_NE(output.find("document-word"), std::string::npos) << output;
  EXPECT_NE(output.find("degree     word: min"), std::string::npos) << output;
  EXPECT_NE(output.find("checksums  all arrays verified"), std::string::npos) << output;
  ASSERT_EQ(run_command(headroom(fmt::format("inspect '{}' --json", store)), &output), 0);
  EXPECT_NE(output.find("\"kind\": \"node-graph\""), std::string::npos) << output;
}

TEST(TextCorpusCli, DocumentCountMismatchIsAnErrorNamingFileAndLine) {
  TempDir dir;
  write_corpus(dir / "corpus");
  write_text_file(dir / "corpus/labels.tsv", "index\tsplit\tlabel\n0\ttrain\tpos\n1\ttest\tneg\n");
  std::string output;
  EXPECT_EQ(run_command(headroom(fmt::format("preprocess '{}' --out '{}'",
                                             (dir / "corpus").string(), (dir / "s").string())),
                        &output),
            1);
  EXPECT_NE(output.find("corpus.txt:3: document 3 has no row in"), std::string::npos) << output;
  EXPECT_FALSE(std::filesystem::exists(dir / "s"));
}

}  // namespace
}  // namespace headroom
