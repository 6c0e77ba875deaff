// Issue 45's last low-severity findings, on the real binaries where a user meets them: a report
// written into a store, integer and list flags that read what was typed as something else, a
// TensorBoard directory that is a device, labels.tsv rows that differ only by a space, a file
// planted where headroom renames its own, and JSON nested deep enough to overflow the stack.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>

#include "headroom/text/text_corpus.hpp"
#include "headroom/util/bounded_json.hpp"
#include "headroom/util/file_writer.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::error_message;
using testing::read_bytes;
using testing::run_command;
using testing::TempDir;
using testing::write_text_file;

// A command that hangs where it should fail is cut off (exit 124); one that crashes exits 128+N.
std::string headroom(const std::string& args) {
  return fmt::format("timeout 300 '{}' {} 2>&1", HEADROOM_BINARY, args);
}

// Every regular file under `root` with its contents, so that a test sees any file written,
// removed or changed.
std::string tree_snapshot(const fs::path& root) {
  std::string snapshot;
  for (const auto& entry : fs::recursive_directory_iterator(root))
    snapshot += fs::relative(entry.path(), root).string() + "\n" +
                (entry.is_regular_file() ? read_bytes(entry.path()) : std::string("(not a file)"));
  return snapshot;
}

// Runs `args`, expects it to fail with every one of `expected` in its output, and returns the
// output.
std::string expect_refused(const std::string& args, std::initializer_list<std::string> expected) {
  std::string output;
  const int status = run_command(headroom(args), &output);
  // An error (1, or CLI11's code for a flag's value), not a crash (128 + signal) or a hang (124).
  EXPECT_TRUE(status == 1 || status == static_cast<int>(CLI::ExitCodes::ValidationError))
      << "exit " << status << ": " << args << "\n"
      << output;
  for (const auto& text : expected)
    EXPECT_NE(output.find(text), std::string::npos) << args << "\nexpected: " << text << "\n"
                                                    << output;
  return output;
}

std::string deeply_nested(std::size_t levels) {
  return std::string(levels, '[') + std::string(levels, ']');
}

class HostileTrustTail : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    store_ = testing::build_synthetic_store(dir_->path(), 20000);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static TempDir* dir_;
  static fs::path store_;
};
TempDir* HostileTrustTail::dir_ = nullptr;
fs::path HostileTrustTail::store_;

// `report RUNS --out stores/D/page.html` wrote into the store: a foreign entry from then on, so
// that --force and `run` refused to rebuild it. Any depth, any spelling, a link to it: refused,
// and the store unchanged.
TEST_F(HostileTrustTail, AReportIsNeverWrittenIntoAStore) {
  TempDir work;
  const auto stage = work / "runs/x/teacher_normal";
  write_text_file(stage / "metrics.jsonl", "{\"type\":\"epoch\",\"epoch\":0,\"train_loss\":1.0}\n");
  fs::create_directory_symlink(store_, work / "link_to_store");
  const auto before = tree_snapshot(store_);
  const auto runs = (work / "runs/x").string();  // a run root: runs/<dataset>
  for (const auto& out :
       {store_ / "page.html", store_ / "deeper/page.html",
        store_ / ".." / store_.filename() / "page.html", work / "link_to_store/page.html"})
    expect_refused(fmt::format("report '{}' --out '{}'", runs, out.string()),
                   {"inside the graph store", "choose another --out"});
  EXPECT_EQ(tree_snapshot(store_), before) << "the store changed";
  std::string output;
  EXPECT_EQ(run_command(headroom(fmt::format("report '{}' --out '{}'", runs,
                                             (work / "page.html").string())),
                        &output),
            0)
      << output;
  EXPECT_TRUE(fs::is_regular_file(work / "page.html"));
}

// `--frames 2e4` was "not in range", `--window 1e3` "Could not convert", `--seed` past 2^64 - 1
// became 2^64 - 1 silently and `--frames 020000` was octal (8192 frames). Every integer flag of
// both binaries, and its config-file key, says alike what is wrong with the value.
TEST_F(HostileTrustTail, IntegerFlagsSayWhatIsWrongWithTheValueAlike) {
  TempDir work;
  const auto data = (work / "data").string();
  expect_refused(fmt::format("generate --out '{}' --frames 2e4", data),
                 {"--frames: '2e4' is not a whole number"});
  expect_refused(
      fmt::format("preprocess '{}' --out '{}' --window 1e3", data, (work / "store").string()),
      {"--window: '1e3' is not a whole number"});
  expect_refused(
      fmt::format("generate --out '{}' --seed 18446744073709551616", data),
      {"--seed: '18446744073709551616' is out of range", "from 0 to 18446744073709551615"});
  expect_refused(fmt::format("generate --out '{}' --frames 0x5000", data),
                 {"--frames: '0x5000' is not a whole number"});
  expect_refused(fmt::format("normal --store '{}' --max-epochs 1e3", store_.string()),
                 {"--max-epochs: '1e3' is not a whole number"});
  expect_refused(fmt::format("normal --store '{}' --seed 99999999999999999999", store_.string()),
                 {"--seed: '99999999999999999999' is out of range"});
  // A memory size names its flag too (found probing: "'-5' is not a memory size").
  expect_refused(fmt::format("normal --store '{}' --memory-budget -5", store_.string()),
                 {"--memory-budget: '-5' is not a memory size"});
  write_text_file(work / "config.toml", "[generate]\nframes = 2e4\n");
  expect_refused(
      fmt::format("--config '{}' generate --out '{}'", (work / "config.toml").string(), data),
      {":2: [generate] 'frames'", "is not a whole number"});
  EXPECT_FALSE(fs::exists(data));
  // The largest seed is taken as it is, and a leading zero is no octal prefix.
  std::string output;
  ASSERT_EQ(
      run_command(headroom(fmt::format(
                      "generate --out '{}' --frames 020000 --seed 18446744073709551615", data)),
                  &output),
      0)
      << output;
  EXPECT_NE(output.find("20000 frames"), std::string::npos) << output;
  EXPECT_NE(output.find("seed 18446744073709551615"), std::string::npos) << output;
}

// Found probing: `generate --out ''` was "filesystem error: cannot make absolute path: Invalid
// argument []", naming nothing, and `--runs-dir ''` wrote runs into the current directory. A
// required path, or one with a default, given "" is refused naming the flag.
TEST_F(HostileTrustTail, AnEmptyPathIsRefusedNamingTheFlag) {
  TempDir work;
  expect_refused("generate --out '' --frames 5000", {"--out: an empty value names nothing"});
  expect_refused(fmt::format("preprocess '' --out '{}'", (work / "store").string()),
                 {"DATASET_DIR: an empty value names nothing"});
  expect_refused(fmt::format("preprocess '{}' --out ' '", (work / "data").string()),
                 {"--out: an empty value names nothing"});
  expect_refused("normal --store '' --max-epochs 1", {"--store: an empty value names nothing"});
  expect_refused(fmt::format("normal --store '{}' --runs-dir '' --max-epochs 1", store_.string()),
                 {"--runs-dir: an empty value names nothing"});
  expect_refused("report ''", {"RUN_DIR: an empty value names nothing"});
  EXPECT_TRUE(fs::is_empty(work.path()));
}

// `evaluation --models ,` blamed --threads: CLI11 dropped the empty entries, so --models took
// the next arguments as its values. `--exclude a,,b` meant `a,b` without a word. A blank entry
// is refused naming the flag, on the command line and in a config file; `--exclude ""` (leave
// nothing out) still works.
TEST_F(HostileTrustTail, ABlankEntryInAListFlagIsRefusedNamingTheFlag) {
  TempDir work;
  const auto store = store_.string();
  auto output = expect_refused(fmt::format("evaluation --store '{}' --models , --threads 1", store),
                               {"--models: ',' has an empty entry"});
  EXPECT_EQ(output.find("--threads"), std::string::npos) << output;
  expect_refused(fmt::format("evaluation --store '{}' --models=a,,b --threads 1", store),
                 {"--models: 'a,,b' has an empty entry"});
  const auto data = (work / "data").string();
  ASSERT_EQ(run_command(headroom(fmt::format("generate --out '{}' --frames 5000", data)), &output),
            0)
      << output;
  const auto new_store = work / "store";
  expect_refused(fmt::format("preprocess '{}' --out '{}' --exclude 'DoS, ' --threads 1", data,
                             new_store.string()),
                 {"--exclude: 'DoS, ' has an empty entry"});
  write_text_file(work / "config.toml", "[preprocess]\nexclude = [\"DoS\", \"\"]\n");
  expect_refused(fmt::format("--config '{}' preprocess '{}' --out '{}'",
                             (work / "config.toml").string(), data, new_store.string()),
                 {":2: [preprocess] 'exclude'", "the list has an empty entry"});
  write_text_file(work / "config.toml", "[preprocess]\nexclude = \"DoS,,\"\n");
  expect_refused(fmt::format("--config '{}' preprocess '{}' --out '{}'",
                             (work / "config.toml").string(), data, new_store.string()),
                 {":2: [preprocess] 'exclude'", "'DoS,,' has an empty entry"});
  EXPECT_FALSE(fs::exists(new_store));
  ASSERT_EQ(run_command(headroom(fmt::format("preprocess '{}' --out '{}' --exclude '' "
                                             "--threads 1 --no-progress",
                                             data, new_store.string())),
                        &output),
            0)
      << output;
}

// `--tensorboard /dev/null` was "filesystem error: cannot create directories: Not a directory",
// naming no flag; so was a --runs-dir below a file (found probing). Both are refused before the
// stage starts, naming the flag and what is in the way.
TEST_F(HostileTrustTail, AnOutputDirectoryThatIsNoDirectoryIsRefusedNamingTheFlag) {
  TempDir work;
  write_text_file(work / "notes.txt", "mine\n");
  const auto runs = (work / "runs").string();
  const auto notes = (work / "notes.txt").string();
  const auto normal = [&](const std::string& extra) {
    return fmt::format("normal --store '{}' --max-epochs 1 --threads 1 {}", store_.string(), extra);
  };
  expect_refused(normal(fmt::format("--runs-dir '{}' --tensorboard /dev/null", runs)),
                 {"--tensorboard /dev/null: '/dev/null' is a character device, not a directory"});
  expect_refused(normal(fmt::format("--runs-dir '{}' --tensorboard '{}/tb'", runs, notes)),
                 {"--tensorboard", "notes.txt' is a regular file, not a directory"});
  expect_refused(
      normal(fmt::format("--runs-dir '{}'", notes)),
      {"the run directory (--runs-dir)", "notes.txt' is a regular file, not a directory"});
  expect_refused(normal("--runs-dir /dev/null"),
                 {"the run directory (--runs-dir)", "'/dev/null' is a character device"});
  EXPECT_EQ(read_bytes(work / "notes.txt"), "mine\n");
  EXPECT_FALSE(fs::exists(work / "runs"));
}

// A rename replaces whatever has the destination's name: a link planted at config.json was
// replaced by a file, a FIFO the same. Refused naming what is there, which stays as it was, and
// no temporary is left; a regular file (a second hard link too) is replaced as before.
TEST(HostileTrustTailWrites, AnAtomicWriteRefusesALinkOrFifoAtItsDestination) {
  TempDir dir;
  write_text_file(dir / "victim.txt", "theirs\n");
  fs::create_symlink(dir / "victim.txt", dir / "config.json");
  ASSERT_EQ(::mkfifo((dir / "result.json").c_str(), 0600), 0);
  fs::create_directory(dir / "evaluation.json");
  for (const char* name : {"config.json", "result.json"}) {
    const auto message =
        error_message([&] { util::write_file_atomically(dir / name, "{\"ours\": true}\n"); });
    EXPECT_NE(message.find(name), std::string::npos) << message;
    EXPECT_NE(message.find("not a regular file"), std::string::npos) << message;
  }
  // rename(2) itself never replaces a directory with a file, and says so.
  const auto message =
      error_message([&] { util::write_file_atomically(dir / "evaluation.json", "{}\n"); });
  EXPECT_NE(message.find("evaluation.json"), std::string::npos) << message;
  EXPECT_TRUE(fs::is_symlink(dir / "config.json"));
  EXPECT_EQ(read_bytes(dir / "victim.txt"), "theirs\n");
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(dir / "result.json")));
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(dir / "evaluation.json")));
  fs::create_hard_link(dir / "victim.txt", dir / "second_name.json");
  util::write_file_atomically(dir / "second_name.json", "ours\n");
  EXPECT_EQ(read_bytes(dir / "second_name.json"), "ours\n");
  EXPECT_EQ(read_bytes(dir / "victim.txt"), "theirs\n");
  for (const auto& entry : fs::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().filename().string().find(".tmp-headroom-"), std::string::npos)
        << entry.path();
  // Found probing: `report --out missing/x.html` named the temporary it could not create.
  auto missing = error_message([&] { util::write_file_atomically(dir / "missing/x.html", ""); });
  EXPECT_NE(missing.find("missing' is not a directory (nothing is there; create it first)"),
            std::string::npos)
      << missing;
  const auto below_a_file =
      error_message([&] { util::write_file_atomically(dir / "victim.txt/x.html", ""); });
  EXPECT_NE(below_a_file.find("victim.txt' is not a directory"), std::string::npos) << below_a_file;
}

// 100,000 '[' in a run's config.json or a store's manifest.json overflowed the stack (a
// segfault, no message); only `report` bounded the depth. Every reader goes through one bounded
// parse.
TEST_F(HostileTrustTail, DeeplyNestedJsonIsRefusedByNameByEveryReader) {
  // The bound itself: 128 levels parse, 129 do not, and brackets inside strings are text.
  EXPECT_NO_THROW(util::parse_json(deeply_nested(util::kMaxJsonDepth)));
  EXPECT_THROW(util::parse_json(deeply_nested(util::kMaxJsonDepth + 1)),
               nlohmann::json::parse_error);
  EXPECT_TRUE(util::parse_json_or_discarded(deeply_nested(100000)).is_discarded());
  EXPECT_EQ(util::parse_json("[\"" + std::string(1000, '[') + "\"]")[0].get<std::string>().size(),
            1000u);

  TempDir work;
  const auto deep = deeply_nested(100000);
  // A store's manifest (inspect, and every command that opens a store).
  fs::copy(store_, work / "store", fs::copy_options::recursive);
  write_text_file(work / "store/manifest.json", deep);
  expect_refused(fmt::format("inspect '{}'", (work / "store").string()),
                 {"manifest", "nested more than 128 levels deep"});
  // A stage's config.json, read back before the stage resumes.
  const auto stage = work / "runs/x/teacher_normal";
  write_text_file(stage / "config.json", deep);
  expect_refused(fmt::format("normal --store '{}' --runs-dir '{}' --dataset x --max-epochs 1 "
                             "--threads 1",
                             store_.string(), (work / "runs").string()),
                 {"config.json", "nested more than 128 levels deep"});
  EXPECT_EQ(read_bytes(stage / "config.json"), deep);
  // A generated dataset's synthetic.json, read when --force asks whether it is headroom's.
  write_text_file(work / "data/synthetic.json", deep);
  expect_refused(fmt::format("generate --out '{}' --frames 5000 --force", (work / "data").string()),
                 {"synthetic.json is not one `headroom generate` wrote"});
  EXPECT_EQ(read_bytes(work / "data/synthetic.json"), deep);
}

// "earn " beside "earn" became a class of its own; a corpus without a test document, or with one
// class, trained and then had nothing (or nothing meaningful) to evaluate.
TEST(HostileTrustTailLabels, SpacesAroundALabelAreNoClassAndADegenerateCorpusIsRefused) {
  TempDir dir;
  const auto file = dir / "labels.tsv";
  write_text_file(file, "index\tsplit\tlabel\n0\ttrain\tearn \n1\ttrain \t acq\n2\ttest\tearn\n");
  const auto labels = text::read_corpus_labels(file);
  EXPECT_EQ(labels.classes, (std::vector<std::string>{"acq", "earn"}));
  EXPECT_EQ(labels.label, (std::vector<std::int32_t>{1, 0, 1}));
  EXPECT_EQ(labels.is_test, (std::vector<bool>{false, false, true}));
  write_text_file(file, "index\tsplit\tlabel\n0\ttrain\tearn\n1\ttrain\tacq\n");
  auto message = error_message([&] { text::read_corpus_labels(file); });
  EXPECT_NE(message.find("labels.tsv: no row's split is 'test'"), std::string::npos) << message;
  write_text_file(file, "index\tsplit\tlabel\n0\ttrain\tearn\n1\ttest\tearn \n");
  message = error_message([&] { text::read_corpus_labels(file); });
  EXPECT_NE(message.find("labels.tsv: every document has the label 'earn'"), std::string::npos)
      << message;
  write_text_file(file, "index\tsplit\tlabel\n0\ttrain\t  \n1\ttest\tearn\n");
  message = error_message([&] { text::read_corpus_labels(file); });
  EXPECT_NE(message.find("labels.tsv:2: empty label"), std::string::npos) << message;
}

}  // namespace
}  // namespace headroom
