// The documents' shell examples, run in order as a new user would run them, so that a renamed
// flag, a changed default or two examples that collide (issue 31: the third fusion example
// stopped on the first one's run directory) fail the suite instead of a user's first hour.
//
// Which blocks run: every fenced `sh` block of README.md, then docs/tracking.md's in the same work
// directory (its report examples read the README's runs), and in work directories of their own
// those of docs/memory.md, docs/text-graphs.md and docs/distributed.md. A block fenced `bash`
// is one a CPU machine cannot run as a new user would (a SLURM script, a GPU-only line, the hours
// of detection.md's experiment records); EveryDocumentedCommandNamesFlagsThatExist still checks
// every `headroom` command of every fenced block, run or not, against the command's --help.
//
// Each run block is one bash script (`set -e`) in a working directory whose
// `../shared/data/can/hcrl_sa` is a small synthetic dataset and `../shared/data/text/{mr,r8,20ng}`
// small corpora, with the built binaries (and the project's Python, for torchrun) first on PATH.
// What is changed, and why, is listed in `example_script`: placeholders get values, an optional
// `[--force]` is given, synthetic data gets fewer frames (the main job's size is the suite's other
// tests' business), `build/bin/headroom` is the binary on PATH, and the MLflow address gets a
// port where nothing listens (the tracker warns and the run goes on). Only two kinds of line are
// left out: `scripts/...` (the harness that runs this very test) and `tensorboard --logdir` (a
// server that runs until stopped).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace headroom {
namespace {

namespace fs = std::filesystem;

struct ShellBlock {
  int first_line = 0;  // 1-based line of the block's first command in README.md
  std::string text;
};

// The fenced blocks opened with ```sh, in order.
std::vector<ShellBlock> shell_blocks(const fs::path& markdown) {
  std::ifstream in(markdown);
  std::vector<ShellBlock> blocks;
  std::string line;
  bool inside = false;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.rfind("```", 0) == 0) {
      inside = !inside && line == "```sh";
      if (inside) blocks.push_back({number + 1, ""});
      continue;
    }
    if (inside) blocks.back().text += line + "\n";
  }
  return blocks;
}

// The lines of every fenced block (any language) of `markdown`, a line continued with `\` joined
// to the next, each with the 1-based number of its first line.
std::vector<std::pair<int, std::string>> fenced_command_lines(const fs::path& markdown) {
  std::ifstream in(markdown);
  std::vector<std::pair<int, std::string>> lines;
  std::string line, pending;
  bool inside = false;
  int number = 0, first = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.rfind("```", 0) == 0) {
      inside = !inside;
      pending.clear();
      continue;
    }
    if (!inside) continue;
    if (pending.empty()) first = number;
    if (!line.empty() && line.back() == '\\') {
      pending += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    lines.emplace_back(first, pending + line);
    pending.clear();
  }
  return lines;
}

// The text of every fenced block of `markdown`, whatever its language, in order.
std::vector<std::string> all_fenced_blocks(const fs::path& markdown) {
  std::ifstream in(markdown);
  std::vector<std::string> blocks;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) {
      inside = !inside;
      if (inside) blocks.emplace_back();
      continue;
    }
    if (inside) blocks.back() += line + "\n";
  }
  return blocks;
}

// The block as the test runs it (see the file comment); `block` numbers placeholders apart, so
// that STORE in two examples names two stores, as a reader would choose two.
std::string example_script(const ShellBlock& block, int index, int mlflow_port) {
  std::string script;
  std::istringstream lines(block.text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("scripts/", 0) == 0 || line.rfind("tensorboard ", 0) == 0 ||
        line.rfind("HEADROOM_FUZZ_SECONDS=", 0) == 0)
      continue;
    script += line + "\n";
  }
  const std::pair<std::string, std::string> substitutions[] = {
      {R"(\bDATASET_DIR\b)", "../shared/data/can/hcrl_sa"},
      {R"(\bSTORE\b)", fmt::format("stores/example{}", index)},
      {R"(\[--force\])", "--force"},  // optional; the examples before wrote what it replaces
      {R"(--frames 400000)", "--frames 20000"},
      {R"(\bbuild/bin/headroom\b)", "headroom"},
      {R"(127\.0\.0\.1:5000)", fmt::format("127.0.0.1:{}", mlflow_port)},
  };
  for (const auto& [pattern, value] : substitutions)
    script = std::regex_replace(script, std::regex(pattern), value);
  return script;
}

// The two CSV layouts of the README's column-mapping examples: bytes in columns with a decimal ID
// and labels, then one hex payload column with the DLC in bits and no labels.
void write_mapped_datasets(const fs::path& work) {
  for (const char* split : {"train_01", "test_01"}) {
    std::string bytes_rows = "Time,ID,DLC,D0,D1,D2,D3,D4,D5,D6,D7,Class\n";
    std::string hex_rows = "Time,ID,Len,Data\n";
    for (int row = 0; row < 3000; ++row) {
      const int id = 100 + (row % 12) * 7;
      const bool attack = row % 10 == 9 && row > 600;
      const auto time = fmt::format("{:.6f}", 1000.0 + row * 0.0005);
      bytes_rows += fmt::format("{},{},8,0{},00,1{},22,0{},00,00,0{},{}\n", time, attack ? 0 : id,
                                row % 10, row % 7, row % 5, row % 3,
                                attack ? (row % 20 == 19 ? "DoS" : "Fuzzing") : "Normal");
      hex_rows += fmt::format("{},{:X},64,{:02X}00{:02X}22000000{:02X}\n", time, id, row % 256,
                              row % 7, row % 13);
    }
    testing::write_text_file(work / "my_dataset" / split / "log-1.csv", bytes_rows);
    testing::write_text_file(work / "other_dataset" / split / "log-1.csv", hex_rows);
  }
}

// A small topic corpus in TextGCN's layout: 12 documents per label, every fourth one a test
// document, each using its topic's words and a few shared ones.
void write_topic_corpus(const fs::path& dir, const std::string& corpus_file,
                        const std::vector<std::string>& topics) {
  std::string labels = "index\tsplit\tlabel\n";
  std::string corpus;
  int index = 0;
  for (std::size_t t = 0; t < topics.size(); ++t) {
    for (int d = 0; d < 12; ++d, ++index) {
      labels += fmt::format("{}\t{}\t{}\n", index, d % 4 == 3 ? "test" : "train", topics[t]);
      corpus += fmt::format("word{0}a word{0}b report {1} word{0}c the market word{0}{2}\n", t,
                            d % 2 == 0 ? "said" : "noted", d % 3);
    }
  }
  testing::write_text_file(dir / "labels.tsv", labels);
  testing::write_text_file(dir / corpus_file, corpus);
}

// A work directory as a new user's: ../shared/data/can/hcrl_sa a small synthetic dataset,
// ../shared/data/text/mr a 24-document corpus, my_graphs graph tables, the mapping examples' CSVs.
void prepare_work_directory(const testing::TempDir& dir, const fs::path& work) {
  fs::create_directories(work);
  const auto bin = fs::path(HEADROOM_TRAIN_BINARY).parent_path();
  std::string output;
  ASSERT_EQ(
      testing::run_command(fmt::format("'{}/headroom' generate --out '{}' --frames 20000 "
                                       "--seed 3 2>&1",
                                       bin.string(), (dir / "shared/data/can/hcrl_sa").string()),
                           &output),
      0)
      << output;
  write_mapped_datasets(work);
  // The graph tables of the import-graphs example: the importer's own test fixture (pyarrow).
  ASSERT_EQ(testing::run_command(
                fmt::format("'{}' '{}/tests/graph_tables/graph_table_fixtures.py' "
                            "'{}' 2>&1",
                            HEADROOM_PYTHON, HEADROOM_SOURCE_DIR, (dir / "tables").string()),
                &output),
            0)
      << output;
  fs::rename(dir / "tables" / "shapes", work / "my_graphs");
  // ../shared/data/qm9/molecules.parquet as the shared copy has it (the columns import-qm9 reads):
  // methane, water and ammonia, one per split.
  fs::create_directories(dir / "shared/data/qm9");
  ASSERT_EQ(
      testing::run_command(
          fmt::format("'{}' -c \"import pyarrow as pa, pyarrow.parquet as pq; pq.write_table("
                      "pa.table({{'index': pa.array([1, 2, 3], pa.int32()), "
                      "'atomic_numbers': pa.array([[6, 1, 1, 1, 1], [8, 1, 1], [7, 1, 1, 1]], "
                      "pa.list_(pa.uint8())), 'positions_angstrom': pa.array([[0, 0, 0, 1.09, "
                      "0, 0, -0.36, 1.03, 0, -0.36, -0.51, 0.89, -0.36, -0.51, -0.89], [0, 0, "
                      "0, 0.96, 0, 0, -0.24, 0.93, 0], [0, 0, 0, 1.01, 0, 0, -0.34, 0.95, 0, "
                      "-0.34, -0.48, 0.82]], pa.list_(pa.float32())), 'gap_hartree': [0.5048, "
                      "0.3, 0.33], 'split': ['train', 'valid', 'test']}}), '{}')\" 2>&1",
                      HEADROOM_PYTHON, (dir / "shared/data/qm9/molecules.parquet").string()),
          &output),
      0)
      << output;
  // Three documents as mr's file has them (Windows-1252, CRLF), then enough short ones that
  // `headroom run` on it holds out validation documents.
  std::string labels = "index\tsplit\tlabel\n0\ttrain\t1\n1\ttrain\t0\n2\ttest\t1\n";
  std::string corpus = "a fine film \x85 truly\r\na dull film\r\nfine acting\r\n";
  for (int d = 3; d < 24; ++d) {
    labels += fmt::format("{}\t{}\t{}\n", d, d % 4 == 0 ? "test" : "train", d % 2);
    corpus += d % 2 == 1 ? "a fine and truly moving film\r\n" : "a dull and tired film\r\n";
  }
  testing::write_text_file(dir / "shared/data/text/mr/labels.tsv", labels);
  testing::write_text_file(dir / "shared/data/text/mr/corpus.txt", corpus);
  // r8 as the shared copy has it (only corpus.clean.txt, eight topic labels), and 20ng (raw
  // corpus.txt, dotted newsgroup labels): small enough to train in seconds.
  write_topic_corpus(dir / "shared/data/text/r8", "corpus.clean.txt",
                     {"earn", "acq", "crude", "trade", "money-fx", "interest", "ship", "grain"});
  write_topic_corpus(dir / "shared/data/text/20ng", "corpus.txt",
                     {"alt.atheism", "comp.graphics", "rec.autos", "sci.space"});
}

// Runs every `sh` block of `markdown` in order in `work` (a failing block fails the test, naming
// its line); returns how many ran.
int run_shell_examples(const fs::path& markdown, const testing::TempDir& dir,
                       const fs::path& work) {
  const auto blocks = shell_blocks(markdown);
  const auto bin = fs::path(HEADROOM_TRAIN_BINARY).parent_path();
  const int mlflow_port = testing::free_tcp_port();
  int ran = 0;
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const auto script = example_script(blocks[k], static_cast<int>(k), mlflow_port);
    if (script.find("headroom") == std::string::npos) continue;  // only harness lines
    const auto file = dir / fmt::format("{}-block{}.sh", markdown.stem().string(), k);
    testing::write_text_file(file, "set -eo pipefail\n" + script);
    // The project's Python environment holds torchrun (docs/distributed.md says so).
    const auto python_bin = fs::path(HEADROOM_PYTHON).parent_path();
    const auto command =
        fmt::format("cd '{}' && PATH='{}':'{}':\"$PATH\" timeout 900 bash -x '{}' 2>&1",
                    work.string(), bin.string(), python_bin.string(), file.string());
    std::string output;
    EXPECT_EQ(testing::run_command(command, &output), 0)
        << markdown.filename().string() << ":" << blocks[k].first_line << ": this example fails:\n"
        << script << "\n--- its output ---\n"
        << output;
    if (::testing::Test::HasFailure()) return ran;
    ++ran;
  }
  return ran;
}

// README.md and every document in docs/.
std::vector<fs::path> all_documents() {
  std::vector<fs::path> documents = {fs::path(HEADROOM_SOURCE_DIR) / "README.md"};
  for (const auto& entry : fs::directory_iterator(fs::path(HEADROOM_SOURCE_DIR) / "docs"))
    if (entry.path().extension() == ".md") documents.push_back(entry.path());
  return documents;
}

// docs/`name`'s sh blocks, in order, in `work` (made and prepared as a new user's) under `dir`;
// how many ran.
int run_document_in_new_work_directory(const std::string& name, const testing::TempDir& dir,
                                       const fs::path& work) {
  prepare_work_directory(dir, work);
  if (::testing::Test::HasFatalFailure()) return 0;
  return run_shell_examples(fs::path(HEADROOM_SOURCE_DIR) / "docs" / name, dir, work);
}

TEST(DocExamples, ReadmeShellExamplesRunInOrder) {
  const auto readme = fs::path(HEADROOM_SOURCE_DIR) / "README.md";
  ASSERT_GE(shell_blocks(readme).size(), 15U) << "README.md's sh blocks were not found";
  testing::TempDir dir;
  const auto work = dir / "work";
  ASSERT_NO_FATAL_FAILURE(prepare_work_directory(dir, work));
  const int ran = run_shell_examples(readme, dir, work);
  ASSERT_FALSE(HasFailure());
  EXPECT_GE(ran, 15);
  // docs/tracking.md's report examples read the runs the README's made.
  const auto tracking = fs::path(HEADROOM_SOURCE_DIR) / "docs" / "tracking.md";
  EXPECT_EQ(run_shell_examples(tracking, dir, work), 1);
  ASSERT_FALSE(HasFailure());
  EXPECT_TRUE(fs::exists(work / "runs" / "synthetic" / "teacher_curriculum" / "report.html"));

  // What the examples promise, checked where a wrong exit status would not show it.
  const auto runs = work / "runs" / "hcrl_sa";
  for (const char* stage :
       {"teacher_autoencoder", "student_autoencoder_kd", "teacher_curriculum",
        "student_curriculum_kd", "student_normal", "teacher_normal_gcn", "fusion_dqn",
        "fusion_logistic", "hybrid_logistic", "fusion_dqn_teacher_curriculum+teacher_autoencoder"})
    EXPECT_TRUE(fs::exists(runs / stage / "best.pt")) << stage;
  EXPECT_TRUE(fs::exists(runs / "evaluation" / "evaluation.json"));
  EXPECT_TRUE(fs::exists(work / "runs" / "synthetic" / "report.html"));
  EXPECT_TRUE(fs::exists(work / "curriculum.html"));
  EXPECT_TRUE(fs::exists(work / "stores" / "mine" / "manifest.json"));
  EXPECT_TRUE(fs::exists(work / "stores" / "other" / "manifest.json"));
  EXPECT_TRUE(fs::exists(work / "stores" / "mr" / "column_index.i32"));
  EXPECT_TRUE(fs::exists(work / "runs" / "my_graphs" / "student_normal_gcn" / "best.pt"));
  EXPECT_TRUE(fs::exists(work / "runs" / "my_dataset" / "evaluation" / "evaluation.json"));
}

// docs/memory.md's examples, in order, in a work directory of their own: the budget on one stage
// and on the main job, a budgeted and an unbudgeted run side by side, the OOM guard alone.
TEST(DocExamples, MemoryDocShellExamplesRunInOrder) {
  testing::TempDir dir;
  const auto work = dir / "work";
  const int ran = run_document_in_new_work_directory("memory.md", dir, work);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(ran, 3);
  const auto budgeted = testing::read_metrics(work / "runs-budgeted" / "synthetic" /
                                              "teacher_normal" / "metrics.jsonl");
  ASSERT_EQ(budgeted.size(), 1U);
  EXPECT_LE(budgeted[0]["memory"]["cpu"]["peak_bytes"].get<std::int64_t>(), 100'000'000);
}

// docs/text-graphs.md's examples, in order: a corpus into a store, TextGCN, the node GAT and SGC
// on r8, the plans and a budgeted run on 20ng.
TEST(DocExamples, TextGraphsDocShellExamplesRunInOrder) {
  testing::TempDir dir;
  const auto work = dir / "work";
  const int ran = run_document_in_new_work_directory("text-graphs.md", dir, work);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(ran, 5);
  EXPECT_TRUE(fs::exists(work / "stores" / "20ng" / "column_index.i32"));
  EXPECT_TRUE(fs::exists(work / "runs" / "r8" / "node_sgc" / "best.pt"));
  EXPECT_TRUE(fs::exists(work / "runs" / "20ng"));
}

// docs/distributed.md's CPU examples, in order: two CPU ranks under torchrun, then a store built
// in three shards and assembled.
TEST(DocExamples, DistributedDocShellExamplesRunInOrder) {
  testing::TempDir dir;
  const auto work = dir / "work";
  const int ran = run_document_in_new_work_directory("distributed.md", dir, work);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(ran, 2);
  EXPECT_TRUE(fs::exists(work / "runs" / "synthetic" / "teacher_normal" / "best.pt"));
  EXPECT_TRUE(fs::exists(work / "stores" / "sharded" / "manifest.json"));
}

// Every `headroom SUBCOMMAND ... --flag` line in a fenced block of README.md and docs/*.md, run by
// the suite or not (bash blocks, benchmark commands, the toml files' comments), names a
// subcommand that exists and flags that its --help (or the top-level --help: --config) lists. A
// renamed or removed flag in a document that no test runs fails here, naming the line.
TEST(DocExamples, EveryDocumentedCommandNamesFlagsThatExist) {
  const auto binary = fs::path(HEADROOM_TRAIN_BINARY).parent_path() / "headroom";
  std::map<std::string, std::optional<std::string>> help;  // subcommand -> its --help, if any
  const auto help_of = [&](const std::string& command) -> const std::optional<std::string>& {
    auto found = help.find(command);
    if (found != help.end()) return found->second;
    std::string output;
    const int status =
        testing::run_command(fmt::format("'{}' {} --help 2>&1", binary.string(), command), &output);
    return help[command] = status == 0 ? std::optional<std::string>(output) : std::nullopt;
  };
  const auto& top_level = help_of("");
  ASSERT_TRUE(top_level.has_value());
  // The subcommands, as the top-level --help lists them (`headroom NAME --help` of a name that is
  // not one prints the top-level help and succeeds).
  std::set<std::string> subcommands;
  const auto listed_from = top_level->find("Subcommands:");
  ASSERT_NE(listed_from, std::string::npos) << *top_level;
  std::istringstream listing(top_level->substr(listed_from));
  for (std::string entry; std::getline(listing, entry);) {
    std::smatch name;
    if (std::regex_search(entry, name, std::regex(R"(^  ([a-z][a-z0-9-]*)\s)")))
      subcommands.insert(name[1]);
  }
  ASSERT_GE(subcommands.size(), 10U) << *top_level;
  const std::regex invocation(R"((?:^|[\s/"'(])headroom\s+([a-z][a-z0-9-]*)(.*))");
  const std::regex flag(R"((?:^|[^\w-])(--[a-z][a-z0-9-]*))");
  const auto documents = all_documents();
  int commands = 0;
  for (const auto& document : documents) {
    for (const auto& [line_number, command_line] : fenced_command_lines(document)) {
      std::smatch match;
      if (!std::regex_search(command_line, match, invocation)) continue;
      const std::string subcommand = match[1];
      // The command's own words: up to a comment, a pipe, a `;`, a `&&` or a `)`.
      const std::string words =
          std::regex_replace(std::string(match[2]), std::regex(R"((\s#|\||;|&&|\)).*)"), "");
      const auto where = fmt::format("{}:{}: {}", document.filename().string(), line_number,
                                     command_line.substr(0, 160));
      const auto& text = help_of(subcommand);
      if (!subcommands.contains(subcommand) || !text) {
        ADD_FAILURE() << where << "\n  `headroom " << subcommand << "` is not a subcommand";
        continue;
      }
      ++commands;
      for (std::sregex_iterator it(words.begin(), words.end(), flag), end; it != end; ++it) {
        const std::string name = (*it)[1];
        const std::regex listed(name + "(?![a-z0-9-])");
        if (!std::regex_search(*text, listed) && !std::regex_search(*top_level, listed))
          ADD_FAILURE() << where << "\n  " << name << " is not a flag of `headroom " << subcommand
                        << "`";
      }
    }
  }
  EXPECT_GE(commands, 100) << "the documents' commands were not found";
}

// --- Numbers the documents quote from a command's output -------------------------------------

// The fenced block of `markdown` whose first line is `$ COMMAND...` starting with `prefix`: the
// command (without `$ `) and the output lines after it.
std::pair<std::string, std::vector<std::string>> recorded_output(const fs::path& markdown,
                                                                 const std::string& prefix) {
  for (const auto& block : all_fenced_blocks(markdown)) {
    std::istringstream lines(block);
    std::string first;
    std::getline(lines, first);
    if (first.rfind("$ " + prefix, 0) != 0) continue;
    std::vector<std::string> output;
    for (std::string line; std::getline(lines, line);) output.push_back(line);
    return {first.substr(2), output};
  }
  return {};
}

// `line` with every number replaced by `#` and runs of spaces by one, and the numbers in order.
std::pair<std::string, std::vector<double>> words_and_numbers(const std::string& line) {
  static const std::regex number(R"(-?\d+(?:\.\d+)?)");
  std::vector<double> numbers;
  for (std::sregex_iterator it(line.begin(), line.end(), number), end; it != end; ++it)
    numbers.push_back(std::stod(it->str()));
  auto words = std::regex_replace(std::regex_replace(line, number, "#"), std::regex(" +"), " ");
  return {words, numbers};
}

// Every line of `documented` against the same line of `actual`: the same words, each whole number
// under 100 exactly (a count: issue 31 item 10, "7 probe batches" where 5 ran), every other number
// within 15% (plus 1), up to a line beginning with `…` (the document leaves the rest out).
void expect_output_like_document(const std::vector<std::string>& documented,
                                 const std::string& actual, const std::string& where) {
  std::vector<std::string> lines;
  std::istringstream in(actual);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_GE(lines.size(), documented.size()) << where << ": the run printed less:\n" << actual;
  for (std::size_t i = 0; i < documented.size(); ++i) {
    if (documented[i].rfind("…", 0) == 0) return;
    const auto [doc_words, doc_numbers] = words_and_numbers(documented[i]);
    const auto [run_words, run_numbers] = words_and_numbers(lines[i]);
    EXPECT_EQ(run_words, doc_words)
        << where << ", output line " << i + 1 << ":\n  documented: " << documented[i]
        << "\n  printed:    " << lines[i];
    if (run_words != doc_words) continue;
    for (std::size_t k = 0; k < doc_numbers.size(); ++k) {
      // Small whole numbers are counts (probe batches, bits of precision, a device's GB): exact.
      const bool count =
          doc_numbers[k] == std::floor(doc_numbers[k]) && std::abs(doc_numbers[k]) < 100;
      const double tolerance =
          count ? 0 : 0.15 * std::max(std::abs(doc_numbers[k]), std::abs(run_numbers[k])) + 1;
      EXPECT_NEAR(run_numbers[k], doc_numbers[k], tolerance)
          << where << ", output line " << i + 1 << ", number " << k + 1
          << ":\n  documented: " << documented[i] << "\n  printed:    " << lines[i];
    }
  }
}

// The store the default `headroom run` builds (the synthetic default at its 400,000 frames), once
// per test binary, in a directory of its own: its `stores/synthetic` is what the documents' plan
// numbers were measured on.
const fs::path& default_synthetic_store_root() {
  static testing::TempDir dir;
  static const bool built = [] {
    std::string output;
    const int status = testing::run_command(
        fmt::format("cd '{0}' && PATH='{1}':\"$PATH\" && headroom generate --out data/synthetic "
                    "--frames 400000 && headroom preprocess data/synthetic --out stores/synthetic "
                    "--threads 2 --no-progress 2>&1",
                    dir.path().string(), fs::path(HEADROOM_TRAIN_BINARY).parent_path().string()),
        &output);
    EXPECT_EQ(status, 0) << output;
    return status == 0;
  }();
  EXPECT_TRUE(built);
  return dir.path();
}

// docs/memory.md's `headroom plan` sample, run again on the store it names (the default `headroom
// run` builds: the synthetic default at its 400,000 frames) in a fresh fit cache.
TEST(DocExamples, MemoryDocPlanSampleMatchesAFreshPlan) {
  const auto memory_doc = fs::path(HEADROOM_SOURCE_DIR) / "docs" / "memory.md";
  const auto [command, documented] = recorded_output(memory_doc, "headroom plan");
  ASSERT_FALSE(command.empty()) << "docs/memory.md has no `$ headroom plan` sample";
  ASSERT_NE(command.find("stores/synthetic"), std::string::npos) << command;
  const auto& root = default_synthetic_store_root();
  testing::TempDir cache;
  const auto bin = fs::path(HEADROOM_TRAIN_BINARY).parent_path();
  std::string output;
  ASSERT_EQ(testing::run_command(
                fmt::format("cd '{}' && PATH='{}':\"$PATH\" HEADROOM_CACHE_DIR='{}' {} 2>&1",
                            root.string(), bin.string(), cache.path().string(), command),
                &output),
            0)
      << output;
  expect_output_like_document(documented, output, "docs/memory.md's plan sample");
}

// The README's footprint figures (issue 29): what `headroom --version` and `headroom-train
// --version` hold at their peak, measured again (the peak RSS of a child process, read by
// getrusage in a Python process of its own), within a quarter. Times are not checked here: they
// belong to benchmarks (docs/benchmarks.md), not to a unit test.
TEST(DocExamples, ReadmeFootprintFiguresHoldWithinAQuarter) {
  std::ifstream in(fs::path(HEADROOM_SOURCE_DIR) / "README.md");
  const std::string readme{std::istreambuf_iterator<char>(in), {}};
  std::smatch data_side, training_side;
  ASSERT_TRUE(std::regex_search(
      readme, data_side, std::regex(R"(`headroom --version` takes ~\d+ ms and ~(\d+) MiB)")));
  ASSERT_TRUE(std::regex_search(readme, training_side,
                                std::regex(R"(`headroom-train --version`: (\d+) MiB)")));
  const auto bin = fs::path(HEADROOM_TRAIN_BINARY).parent_path();
  const auto peak_mib = [&](const std::string& binary) {
    std::string output;
    EXPECT_EQ(testing::run_command(
                  fmt::format("'{}' -c \"import resource, subprocess; "
                              "subprocess.run(['{}/{}', '--version'], capture_output=True, "
                              "check=True); "
                              "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\"",
                              HEADROOM_PYTHON, bin.string(), binary),
                  &output),
              0)
        << output;
    return std::stod(output) / 1024;
  };
  const double documented_data = std::stod(data_side[1]);
  const double documented_training = std::stod(training_side[1]);
  EXPECT_NEAR(peak_mib("headroom"), documented_data, documented_data / 4);
  EXPECT_NEAR(peak_mib("headroom-train"), documented_training, documented_training / 4);
}

// A documented default against the one --help prints: booleans as true/1, false/0; numbers by
// value (1e-4 and 0.0001); lists with or without brackets, by comma or space.
bool same_default(std::string documented, std::string printed) {
  const auto normalise = [](std::string value) {
    value = std::regex_replace(value, std::regex(R"([\[\]])"), "");
    value = std::regex_replace(value, std::regex(R"(\s+)"), ",");
    if (value == "true" || value == "on") return std::string("1");
    if (value == "false" || value == "off") return std::string("0");
    return value;
  };
  documented = normalise(documented);
  printed = normalise(printed);
  if (documented == printed) return true;
  try {
    std::size_t used_a = 0, used_b = 0;
    const double a = std::stod(documented, &used_a), b = std::stod(printed, &used_b);
    return used_a == documented.size() && used_b == printed.size() && a == b;
  } catch (const std::exception&) {
    return false;
  }
}

// docs/configuration.md's and docs/distributed.md's flag tables (`| flag | default | meaning |`)
// against the commands their section names: each flag exists in at least one of them, and where
// --help prints a default (`=VALUE`), the documented one is the same (issue 31, item 1: the doc
// gave `can-id` and `kd-gat` after the defaults had changed). A default that depends on something
// (`preset`, "`vgae,teacher` (autoencoder), `gat,teacher` ...", an environment variable, a path
// template) is a sentence, not a value, and is not compared.
TEST(DocExamples, DocumentedDefaultsAreTheCommandsDefaults) {
  const auto binary = fs::path(HEADROOM_TRAIN_BINARY).parent_path() / "headroom";
  std::map<std::string, std::string> help;
  const auto help_of = [&](const std::string& command) -> const std::string& {
    auto found = help.find(command);
    if (found != help.end()) return found->second;
    std::string output;
    testing::run_command(fmt::format("'{}' {} --help 2>&1", binary.string(), command), &output);
    return help[command] = output;
  };
  const std::set<std::string> commands = {"generate", "preprocess", "import-graphs", "inspect",
                                          "report",   "run",        "autoencoder",   "curriculum",
                                          "normal",   "fusion",     "evaluation",    "plan"};
  const std::vector<std::string> training_stages = {"autoencoder", "curriculum", "normal",
                                                    "fusion",      "evaluation", "run"};
  int compared = 0;
  for (const char* name : {"configuration.md", "distributed.md"}) {
    const auto document = fs::path(HEADROOM_SOURCE_DIR) / "docs" / name;
    std::ifstream in(document);
    std::vector<std::string> section;  // the commands the current heading names
    bool in_table = false, in_fence = false;
    int number = 0;
    for (std::string line; std::getline(in, line);) {
      ++number;
      if (line.rfind("```", 0) == 0) in_fence = !in_fence;
      if (in_fence) continue;  // a `#` there is a comment, not a heading
      if (line.rfind("#", 0) == 0) {
        section.clear();
        std::smatch word;
        for (auto it = line.cbegin();
             std::regex_search(it, line.cend(), word, std::regex("`([a-z-]+)`"));
             it = word.suffix().first)
          if (commands.contains(word[1])) section.push_back(word[1]);
        // Sections about flags every training stage takes (tracking, data-parallel training).
        if (section.empty() && line.rfind("## ", 0) == 0) section = training_stages;
        in_table = false;
        continue;
      }
      if (line.rfind("| flag | default |", 0) == 0) {
        in_table = true;
        continue;
      }
      if (line.rfind("|", 0) != 0) in_table = false;
      if (!in_table || line.rfind("|---", 0) == 0) continue;
      std::vector<std::string> cells;
      std::istringstream row(line.substr(1));
      for (std::string cell; std::getline(row, cell, '|');)
        cells.push_back(std::regex_replace(cell, std::regex(R"(^\s+|\s+$)"), ""));
      std::smatch flag;
      if (cells.size() < 3 || !std::regex_search(cells[0], flag, std::regex("`(--[a-z0-9-]+)")))
        continue;
      const std::string where = fmt::format("{}:{}: {}", name, number, line.substr(0, 120));
      // The default as a value: one backticked or bare word, before any explanation (`0 = ...`).
      std::string documented = cells[1];
      const auto ticks = std::count(documented.begin(), documented.end(), '`');
      if (ticks > 2 || documented.find('$') != std::string::npos ||
          documented.find('{') != std::string::npos)
        documented.clear();
      documented = std::regex_replace(documented, std::regex("`"), "");
      documented = documented.substr(0, documented.find(" ="));
      const bool a_value = !documented.empty() && documented.find(' ') == std::string::npos &&
                           documented != "preset" && documented != "(required)" &&
                           documented != "—";
      bool offered = false;
      for (const auto& command : section) {
        const auto& text = help_of(command);
        std::smatch option;
        const std::regex option_line("\n  (?:-[a-z],)?" + std::string(flag[1]) +
                                     "(?=[ =,\n])([^\n]*)");
        if (!std::regex_search(text, option, option_line)) continue;
        offered = true;
        std::smatch printed;
        const std::string rest = option[1];
        if (!a_value || !std::regex_search(rest, printed,
                                           std::regex(R"(=([^ ]+(?: [^ ]+)*(?= \.\.\.)|[^ ]+))")))
          continue;
        ++compared;
        EXPECT_TRUE(same_default(documented, printed[1]))
            << where << "\n  `headroom " << command << " --help` gives " << flag[1]
            << " the default " << printed[1] << ", the document " << documented;
      }
      EXPECT_TRUE(offered) << where << "\n  no command of this section has " << flag[1];
    }
  }
  EXPECT_GE(compared, 60) << "the tables' defaults were not found";
}

// The README's and docs/memory.md's "57–91% above the measured fit" (issue 31, item 6: the range
// had drifted from what the store gave): `plan --mode static` against the measured fit for the
// four presets with checkpointing on, both evaluated for the default store's mixed probe batch
// (docs/benchmarks.md, "Static estimate versus measured fit": 1,024 graphs, 41,736 nodes, 78,704
// edges). The quoted range's ends must be the measured ones to within 5 points, and the estimate
// is never under the fit.
TEST(DocExamples, StaticEstimateMarginIsTheQuotedRange) {
  std::ifstream in(fs::path(HEADROOM_SOURCE_DIR) / "README.md");
  const std::string readme{std::istreambuf_iterator<char>(in), {}};
  std::smatch quoted;
  ASSERT_TRUE(std::regex_search(readme, quoted,
                                std::regex(R"(conservative: (\d+)–(\d+)% above the measured)")));
  const double low = std::stod(quoted[1]), high = std::stod(quoted[2]);
  const auto& root = default_synthetic_store_root();
  testing::TempDir cache;
  const auto peak_at_mixed_batch = [&](const std::string& preset, const std::string& mode) {
    std::string output;
    EXPECT_EQ(testing::run_command(
                  fmt::format("cd '{}' && HEADROOM_CACHE_DIR='{}' '{}/headroom' plan --store "
                              "stores/synthetic --preset {} --batch-size 4096 "
                              "--gradient-checkpointing on --mode {} --json 2>/dev/null",
                              root.string(), cache.path().string(),
                              fs::path(HEADROOM_TRAIN_BINARY).parent_path().string(), preset, mode),
                  &output),
              0)
        << output;
    const auto plan = nlohmann::json::parse(output);
    const double nodes = 41736, edges = 78704, graphs = 1024;
    const auto bytes = [&](const char* key) { return plan.at(key).get<double>(); };
    return bytes("parameter_bytes") + bytes("gradient_bytes") + bytes("optimizer_bytes") +
           bytes("fixed_other_bytes") +
           (bytes("activation_bytes_per_node") + bytes("input_bytes_per_node")) * nodes +
           (bytes("activation_bytes_per_edge") + bytes("input_bytes_per_edge")) * edges +
           bytes("activation_bytes_per_graph") * graphs;
  };
  double smallest = 1e9, largest = -1e9;
  for (const char* preset : {"gat,teacher", "gat,student", "vgae,teacher", "vgae,student"}) {
    const double margin =
        100 * (peak_at_mixed_batch(preset, "static") / peak_at_mixed_batch(preset, "measured") - 1);
    EXPECT_GT(margin, 0) << preset << ": the static estimate is under the measured fit";
    smallest = std::min(smallest, margin);
    largest = std::max(largest, margin);
  }
  EXPECT_NEAR(smallest, low, 5) << "README quotes " << low << "–" << high << "%";
  EXPECT_NEAR(largest, high, 5) << "README quotes " << low << "–" << high << "%";
}

// The cells of a Markdown table row: split at `|` outside code spans, `\|` kept as a character.
std::size_t table_cells(const std::string& row) {
  std::string line = std::regex_replace(row, std::regex(R"(^\s*\||\|\s*$)"), "");
  std::size_t count = 1;
  bool code = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      ++i;
      continue;
    }
    if (line[i] == '`') code = !code;
    if (line[i] == '|' && !code) ++count;
  }
  return count;
}

// Every row of every table in README.md and docs/*.md has as many cells as its header (issue 31,
// item 8: a table in docs/benchmarks.md had 7 header columns and 4 in its rows, which renders as
// a mangled table, its numbers under the wrong headings).
TEST(DocExamples, EveryTableRowHasItsHeadersColumns) {
  const auto documents = all_documents();
  const std::regex separator(R"(^\|[\s:|-]+\|?\s*$)");
  int tables = 0;
  for (const auto& document : documents) {
    std::ifstream in(document);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    bool fence = false;
    std::size_t header = 0;  // the current table's cell count; 0 outside a table
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const auto& line = lines[i];
      if (line.rfind("```", 0) == 0) {
        fence = !fence;
        header = 0;
        continue;
      }
      if (fence || line.rfind("|", 0) != 0) {
        header = 0;
        continue;
      }
      if (header == 0) {
        if (i + 1 < lines.size() && std::regex_match(lines[i + 1], separator)) {
          header = table_cells(line);
          ++tables;
        }
        continue;
      }
      EXPECT_EQ(table_cells(line), header)
          << document.filename().string() << ":" << i + 1 << ": " << line.substr(0, 120);
    }
  }
  EXPECT_GE(tables, 50) << "the documents' tables were not found";
}

// A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens.
std::string heading_anchor(const std::string& heading) {
  std::string anchor;
  for (const char c : heading) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')
      anchor += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (c == ' ')
      anchor += '-';
  }
  return anchor;
}

// Every relative link in README.md and docs/*.md names a file that exists and, with `#anchor`, a
// heading of that file (issue 31, item 4: the benchmarks cited a table that was not there).
TEST(DocExamples, EveryLinkBetweenDocumentsResolves) {
  const auto documents = all_documents();
  const auto prose_of = [](const fs::path& document) {
    std::ifstream in(document);
    std::string prose, anchors;
    bool fence = false;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("```", 0) == 0) fence = !fence;
      if (fence || line.rfind("```", 0) == 0) continue;
      prose += line + "\n";
      if (line.rfind("#", 0) == 0)
        anchors += " " + heading_anchor(line.substr(line.find_first_not_of("# "))) + " ";
    }
    return std::make_pair(prose, anchors);
  };
  int links = 0;
  for (const auto& document : documents) {
    const auto [prose, own_anchors] = prose_of(document);
    const std::regex link(R"(\]\(([^)\s]+)\))");
    for (std::sregex_iterator it(prose.begin(), prose.end(), link), end; it != end; ++it) {
      const std::string target = (*it)[1];
      if (std::regex_search(target, std::regex("^[a-z]+:"))) continue;  // https:, mailto:
      ++links;
      const auto hash = target.find('#');
      const std::string file = target.substr(0, hash);
      const auto path = file.empty() ? document : document.parent_path() / file;
      const auto where = document.filename().string() + ": (" + target + ")";
      if (!fs::exists(path)) {
        ADD_FAILURE() << where << ": no file " << path.string();
        continue;
      }
      if (hash == std::string::npos || path.extension() != ".md") continue;
      const auto anchors = file.empty() ? own_anchors : prose_of(path).second;
      EXPECT_NE(anchors.find(" " + target.substr(hash + 1) + " "), std::string::npos)
          << where << ": " << path.filename().string() << " has no such heading";
    }
  }
  EXPECT_GE(links, 30) << "the documents' links were not found";
}

// The README's install paragraph names every Debian package scripts/setup.sh installs and every
// PyPI pin it installs (issue 31, item 11: the README said `-dev` packages; the script also
// installed Chromium and clang).
TEST(DocExamples, ReadmeNamesWhatSetupInstalls) {
  const auto read = [](const fs::path& file) {
    std::ifstream in(file);
    return std::string{std::istreambuf_iterator<char>(in), {}};
  };
  const auto readme = read(fs::path(HEADROOM_SOURCE_DIR) / "README.md");
  const auto setup = read(fs::path(HEADROOM_SOURCE_DIR) / "scripts" / "setup.sh");
  std::smatch list;
  ASSERT_TRUE(std::regex_search(setup, list, std::regex(R"(debian_packages=\(([^)]*)\))")));
  const std::string packages = list[1];
  const std::regex package_name(R"([a-z0-9][a-z0-9.+-]+)");
  const std::regex version_variable(R"re(([A-Z]+)_VERSION="([0-9.]+)")re");
  const std::regex pinned_string(R"re("([a-z_-]+)==([0-9.]+)")re");
  int named = 0;
  for (std::sregex_iterator it(packages.begin(), packages.end(), package_name), end; it != end;
       ++it, ++named)
    EXPECT_NE(readme.find("`" + it->str() + "`"), std::string::npos)
        << "scripts/setup.sh installs " << it->str() << "; the README does not say so";
  EXPECT_GE(named, 15);
  // The pins: NAME_VERSION="x" variables and "name==x" strings.
  std::map<std::string, std::string> pins;
  for (std::sregex_iterator it(setup.begin(), setup.end(), version_variable), end; it != end;
       ++it) {
    std::string name = (*it)[1];
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    pins[name] = (*it)[2];
  }
  for (std::sregex_iterator it(setup.begin(), setup.end(), pinned_string), end; it != end; ++it)
    pins[(*it)[1]] = (*it)[2];
  EXPECT_GE(pins.size(), 8U);
  for (const auto& [name, version] : pins)
    EXPECT_NE(readme.find("`" + name + "==" + version + "`"), std::string::npos)
        << "scripts/setup.sh pins " << name << "==" << version << "; the README does not say so";
}

// The convention the documents keep: a block fenced `sh` is an example the suite runs. Every
// document with one is among those the tests above run (a new `sh` block elsewhere would look
// tested and not be); records and cluster scripts are fenced `bash`.
TEST(DocExamples, EveryShBlockIsInADocumentTheSuiteRuns) {
  const std::set<std::string> run = {"README.md", "tracking.md", "memory.md", "text-graphs.md",
                                     "distributed.md"};
  const auto documents = all_documents();
  for (const auto& document : documents) {
    if (run.contains(document.filename().string())) {
      EXPECT_FALSE(shell_blocks(document).empty()) << document << " has no sh block left to run";
      continue;
    }
    for (const auto& block : shell_blocks(document))
      ADD_FAILURE() << document.filename().string() << ":" << block.first_line
                    << ": an `sh` block that no test runs (fence it `bash` if it is a record or "
                       "needs a GPU or a cluster, or run its document in DocExamples)";
  }
}

}  // namespace
}  // namespace headroom
