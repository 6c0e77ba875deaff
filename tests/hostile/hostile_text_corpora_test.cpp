// Hostile text corpora through the real `headroom` binary: --force never deletes what headroom did
// not write, and names and text holding terminal escapes are printed escaped.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "headroom/util/file_reader.hpp"
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
  write_text_file(dir / "corpus.txt", "a fine film\r\na dull film\r\nfine acting\r\n");
}

TEST(HostileTextCorpora, ForceNeverReplacesWhatHeadroomDidNotWrite) {
  TempDir dir;
  write_corpus(dir / "corpus");
  write_text_file(dir / "mine/manifest.json", "{\"name\": \"my web app\"}\n");
  write_text_file(dir / "mine/index.html", "<html>keep me</html>\n");
  std::string output;
  EXPECT_NE(run_command(headroom(fmt::format("preprocess '{}' --out '{}' --force",
                                             (dir / "corpus").string(), (dir / "mine").string())),
                        &output),
            0);
  EXPECT_NE(output.find("headroom: error:"), std::string::npos) << output;
  EXPECT_EQ(util::read_file(dir / "mine/manifest.json"), "{\"name\": \"my web app\"}\n");
  EXPECT_EQ(util::read_file(dir / "mine/index.html"), "<html>keep me</html>\n");
  // A node-graph store headroom wrote is replaced; one a user added a file to is not.
  const auto store = (dir / "store").string();
  const auto corpus = (dir / "corpus").string();
  ASSERT_EQ(
      run_command(headroom(fmt::format("preprocess '{}' --out '{}'", corpus, store)), &output), 0)
      << output;
  ASSERT_EQ(run_command(headroom(fmt::format("preprocess '{}' --out '{}' --force", corpus, store)),
                        &output),
            0)
      << output;
  write_text_file(dir / "store/notes.txt", "my notes\n");
  EXPECT_NE(run_command(headroom(fmt::format("preprocess '{}' --out '{}' --force", corpus, store)),
                        &output),
            0);
  EXPECT_NE(output.find("notes.txt"), std::string::npos) << output;
  EXPECT_EQ(util::read_file(dir / "store/notes.txt"), "my notes\n");
}

TEST(HostileTextCorpora, NamesAndTextArePrintedEscaped) {
  TempDir dir;
  const std::string hostile = "corpus\x1b[31m\x1b]0;pwned\x07";
  write_corpus(dir / hostile);
  // A bad labels row quoting terminal escapes.
  write_text_file(dir / hostile / "labels.tsv",
                  "index\tsplit\tlabel\n0\ttrain\tpos\n1\t\x1b[2Jdev\tneg\n2\ttest\tpos\n");
  std::string output;
  EXPECT_EQ(run_command(headroom(fmt::format("preprocess '{}' --out '{}'", (dir / hostile).string(),
                                             (dir / "s").string())),
                        &output),
            1);
  EXPECT_NE(output.find("labels.tsv:3: split '\\x1B[2Jdev' is neither train nor test"),
            std::string::npos)
      << output;
  EXPECT_EQ(output.find('\x1b'), std::string::npos) << "an escape byte reached the terminal";
  EXPECT_FALSE(std::filesystem::exists(dir / "s"));
}

}  // namespace
}  // namespace headroom
