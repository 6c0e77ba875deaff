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

// `run` rebuilds its own store every run; it once replaced a CAN store with a text store (and the
// reverse) and a store built from another corpus, without --force, because only the CAN path
// checked whose store it replaced and an unreadable manifest counted as "damaged". Every kind,
// every direction: refused unless the store was built from this source, and nothing changes.
// (Mutation seen to fail: run_text_corpus without its require_store_of call.)
TEST(HostileTextCorpora, RunReplacesOnlyAStoreOfItsOwnKindAndSource) {
  TempDir dir;
  const auto corpus = dir / "corpus";
  // Enough documents for validation nodes, so that the run at the end trains.
  std::string labels = "index\tsplit\tlabel\n";
  std::string text;
  for (int d = 0; d < 40; ++d) {
    labels += fmt::format("{}\t{}\t{}\n", d, d < 30 ? "train" : "test", d % 2 ? "pos" : "neg");
    text += d % 2 ? "a fine film with fine acting\n" : "a dull film with dull acting\n";
  }
  write_text_file(corpus / "labels.tsv", labels);
  write_text_file(corpus / "corpus.txt", text);
  write_corpus(dir / "other/corpus");
  std::string output;
  const auto can = dir / "can";
  ASSERT_EQ(run_command(headroom(fmt::format("generate --frames 5000 --out '{}'", can.string())),
                        &output),
            0)
      << output;
  const auto can_store = dir / "stores/can";
  const auto text_store = dir / "stores/text";
  ASSERT_EQ(run_command(headroom(fmt::format("preprocess '{}' --out '{}' --no-progress",
                                             can.string(), can_store.string())),
                        &output),
            0)
      << output;
  ASSERT_EQ(run_command(headroom(fmt::format("preprocess '{}' --out '{}'", corpus.string(),
                                             text_store.string())),
                        &output),
            0)
      << output;
  write_text_file(dir / "odd/manifest.json", "{\"format\": \"something else\"}\n");
  const auto runs = (dir / "runs").string();
  const auto refused = [&](const std::filesystem::path& source, const std::filesystem::path& store,
                           const std::string& expected) {
    const auto before = util::read_file(store / "manifest.json");
    std::string said;
    EXPECT_NE(run_command(headroom(fmt::format("run '{}' --store '{}' --runs-dir '{}' --max-epochs "
                                               "1 --progress false",
                                               source.string(), store.string(), runs)),
                          &said),
              0)
        << said;
    EXPECT_NE(said.find(expected), std::string::npos) << said;
    EXPECT_NE(said.find(store.filename() == "odd" ? "remove it yourself" : "pass --force"),
              std::string::npos)
        << said;
    EXPECT_EQ(util::read_file(store / "manifest.json"), before) << store;
  };
  refused(corpus, can_store, "holds a CAN windows store built from");
  refused(can, text_store, "holds a text corpus's node graph built from");
  refused(dir / "other/corpus", text_store, "holds a text corpus's node graph built from");
  refused(corpus, dir / "odd", "odd/manifest.json: not a headroom graph store manifest");
  refused(can, dir / "odd", "odd/manifest.json: not a headroom graph store manifest");
  EXPECT_FALSE(std::filesystem::exists(dir / "runs"));
  // No validation graphs: refused before a store is built (every stage validates).
  EXPECT_NE(run_command(headroom(fmt::format("run '{}' --store '{}' --runs-dir '{}' "
                                             "--val-fraction 0 --progress false",
                                             can.string(), (dir / "stores/none").string(), runs)),
                        &output),
            0);
  EXPECT_NE(output.find("--val-fraction 0 leaves no validation graphs"), std::string::npos)
      << output;
  EXPECT_FALSE(std::filesystem::exists(dir / "stores/none"));
  // Its own store, built by `preprocess` from the same corpus named another way, is rebuilt.
  EXPECT_EQ(run_command(headroom(fmt::format("run '{}/../corpus/' --store '{}' --runs-dir '{}' "
                                             "--max-epochs 1 --progress false",
                                             corpus.string(), text_store.string(), runs)),
                        &output),
            0)
      << output;
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
