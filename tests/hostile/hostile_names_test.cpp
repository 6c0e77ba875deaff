// Hostile input through the real binaries. File and directory names may hold anything but '/' and
// NUL: HTML (<b>, <!--, and </script> across two names), terminal escape sequences (ESC[31m
// colours, ESC]0;...BEL sets the window title) and newlines (a name that starts a line of its own
// can fake a message). Whatever headroom prints must reach the terminal without one control byte,
// the HTML report must draw its charts whatever the names, and credentials in a tracking URI must
// never be printed or written. Also: --threads far above the cores, entries of a split that are
// not read, and run files that are not the JSON the report expects.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "headroom/util/thread_count.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kRed = "\x1b[31m";            // SGR: colours what follows
const std::string kTitle = "\x1b]0;pwned\x07";  // OSC: sets the terminal's title
const std::string kFakeLine = "\nFAKE";         // a line of its own, if printed raw
const std::string kPassword = "S3cr3t";         // in the tracking URI's user info
const std::string kUserInfo = "alice:" + kPassword;

// `text` quoted for /bin/sh.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string headroom(const std::string& args) { return quoted(HEADROOM_BINARY) + " " + args; }

std::string slurp(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The bytes of `output` a terminal would act on (every control byte but the newline, and DEL),
// each with what precedes it; empty when there is none.
std::string control_bytes_in(const std::string& output) {
  std::string found;
  for (std::size_t i = 0; i < output.size(); ++i) {
    const auto c = static_cast<unsigned char>(output[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7F)
      found += fmt::format("0x{:02X} after '{}'\n", c,
                           output.substr(i < 40 ? 0 : i - 40, std::min<std::size_t>(i, 40)));
  }
  return found;
}

// True when a line of `output` starts with "fake", in any case (attack types are lower-cased).
bool has_fake_line(const std::string& output) {
  std::string lower(output.size(), ' ');
  std::transform(output.begin(), output.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.rfind("fake", 0) == 0 || lower.find("\nfake") != std::string::npos;
}

// Runs `command` and checks that it succeeded and printed nothing a terminal would act on.
std::string run_printing_safely(const std::string& what, const std::string& command) {
  std::string output;
  EXPECT_EQ(testing::run_command(command, &output), 0) << what << ":\n" << output;
  EXPECT_EQ(control_bytes_in(output), "") << what << " printed control bytes:\n" << output;
  EXPECT_FALSE(has_fake_line(output)) << what << " printed a name's newline raw:\n" << output;
  return output;
}

void rename_in(const fs::path& dir, const std::string& from, const std::string& to) {
  fs::rename(dir / from, dir / to);
}

// A generated dataset renamed so that split, subdirectory and file names are hostile, with a
// duplicate, an attack-free file named for an attack, a file left out by name, and a README that
// is not read: each of them makes preprocessing print its name.
fs::path hostile_dataset(const fs::path& dir) {
  const auto data = dir / ("gen<b>" + kRed + kFakeLine);
  const auto generated = run_printing_safely(
      "generate", headroom("generate --frames 20000 --seed 3 --out " + quoted(data.string())));
  EXPECT_NE(generated.find("gen<b>\\x1B[31m\\x0AFAKE"), std::string::npos) << generated;
  const auto train_free = data / "train_01_attack_free";
  const auto train_attacks = data / "train_02_with_attacks";
  rename_in(train_attacks, "DoS-1.csv", "dos<b>" + kRed + "-1.csv");
  fs::copy_file(train_free / "attack-free-1.csv", train_free / ("copy" + kTitle + "-9.csv"));
  rename_in(train_free, "attack-free-2.csv", "spoofing" + kRed + "-2.csv");  // holds no attack
  fs::copy_file(train_free / "attack-free-1.csv", train_free / ("suppress" + kTitle + ".csv"));
  const std::string test_01 = "test_01_<b>" + kRed + kFakeLine;
  const std::string test_02 = "test_02_<!--<script>" + kTitle;
  rename_in(data, "test_01_known_vehicle_known_attack", test_01);
  rename_in(data, "test_02_known_vehicle_unknown_attack", test_02);
  rename_in(data / test_01, "fuzzing-2.csv", "fuzz" + kRed + "<!--" + kFakeLine + "-2.csv");
  fs::create_directory(data / test_02 / ("sub" + kTitle));
  fs::rename(data / test_02 / "spoofing-1.csv",
             data / test_02 / ("sub" + kTitle) / "spoofing-1.csv");
  testing::write_text_file(data / test_01 / ("notes" + kRed + ".md"), "not a log");
  return data;
}

// Every regular file under `root` (names included) that holds `secret`.
std::vector<std::string> files_holding(const fs::path& root, const std::string& secret) {
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.path().string().find(secret) != std::string::npos)
      found.push_back(entry.path().string());
    if (entry.is_regular_file() && !entry.is_symlink() &&
        slurp(entry.path()).find(secret) != std::string::npos)
      found.push_back(entry.path().string());
  }
  return found;
}

TEST(HostileNames, DataCommandsPrintNamesEscaped) {
  testing::TempDir dir;
  const auto data = hostile_dataset(dir.path());
  const auto store = dir / ("store<!--<script>" + kTitle + kFakeLine);
  const auto preprocessed = run_printing_safely(
      "preprocess", headroom("preprocess " + quoted(data.string()) + " --out " +
                             quoted(store.string()) + " --threads 2 --no-progress"));
  // Each finding names its file, escaped.
  for (const std::string name :
       {"test_01_<b>\\x1B[31m\\x0AFAKE/notes\\x1B[31m.md", "suppress\\x1B]0;pwned\\x07.csv",
        "copy\\x1B]0;pwned\\x07-9.csv", "spoofing\\x1B[31m-2.csv", "test_01_<b>\\x1B[31m\\x0AFAKE"})
    EXPECT_NE(preprocessed.find(name), std::string::npos) << name << "\n" << preprocessed;

  run_printing_safely("inspect", headroom("inspect " + quoted(store.string())));
  const auto inspected =
      run_printing_safely("inspect --json", headroom("inspect --json " + quoted(store.string())));
  const auto summary = json::parse(inspected);
  bool found = false;
  for (const auto& split : summary["splits"])
    found = found || split["name"] == "test/test_02_<!--<script>" + kTitle;
  EXPECT_TRUE(found) << "the JSON keeps the names as they are: " << summary["splits"].dump();
}

// Training and evaluation on the hostile dataset, reporting to a tracking URI with credentials
// where nothing listens (each command warns once and says at the end what it could not deliver);
// then the report of the run root, whose name holds "<!--<script>" and whose store path holds
// "</script>", opened in headless Chromium.
TEST(HostileNames, TrainingEvaluationAndReportEscapeNamesHideCredentialsAndTheReportRenders) {
  testing::TempDir dir;
  const auto data = hostile_dataset(dir.path());
  const std::string dataset = "script><!--<script><b>" + kRed + kTitle + kFakeLine;
  const auto store = dir / "st<" / dataset;  // its path holds "</script>"
  fs::create_directories(store.parent_path());
  run_printing_safely("preprocess",
                      headroom("preprocess " + quoted(data.string()) + " --out " +
                               quoted(store.string()) + " --threads 2 --no-progress"));
  const auto runs = dir / "runs";
  const std::string uri =
      "http://" + kUserInfo + "@127.0.0.1:" + std::to_string(testing::free_tcp_port());
  const std::string common = " --store " + quoted(store.string()) + " --runs-dir " +
                             quoted(runs.string()) + " --threads 2 --progress false";

  // A scheme refused: the error quotes the URI without its credentials.
  std::string refused;
  EXPECT_EQ(
      testing::run_command(headroom("normal --preset gat,student --max-epochs 1" + common +
                                    " --mlflow-uri " + quoted("ftp://" + kUserInfo + "@host")),
                           &refused),
      1)
      << refused;
  EXPECT_NE(refused.find("ftp://***@host"), std::string::npos) << refused;

  // A password with an unencoded '#' (which ends a URL's authority) was printed in full: it is
  // masked to the last '@' and refused, saying how to write it.
  std::string encoded_wrongly;
  EXPECT_EQ(testing::run_command(
                headroom("normal --preset gat,student --max-epochs 1" + common + " --mlflow-uri " +
                         quoted("http://alice:" + kPassword + "#x/y@127.0.0.1:9")),
                &encoded_wrongly),
            1)
      << encoded_wrongly;
  EXPECT_NE(encoded_wrongly.find("'http://***@127.0.0.1:9': its user name or password holds"),
            std::string::npos)
      << encoded_wrongly;
  std::vector<std::string> outputs = {refused, encoded_wrongly};
  outputs.push_back(run_printing_safely(
      "normal", "timeout 600 " + headroom("normal --preset gat,student --max-epochs 1 "
                                          "--batch-size 64" +
                                          common + " --mlflow-uri " + quoted(uri))));
  outputs.push_back(run_printing_safely(
      "evaluation",
      "MLFLOW_TRACKING_URI=" + quoted(uri) + " timeout 600 " + headroom("evaluation" + common)));
  const auto evaluated = outputs.back();
  EXPECT_NE(evaluated.find("test_01_<b>\\x1B[31m\\x0AFAKE"), std::string::npos) << evaluated;
  EXPECT_NE(evaluated.find("http://***@127.0.0.1:"), std::string::npos) << evaluated;
  const auto root = runs / dataset;
  outputs.push_back(run_printing_safely("report", headroom("report " + quoted(root.string()))));

  for (const auto& output : outputs) {
    EXPECT_EQ(output.find(kPassword), std::string::npos) << output;
    EXPECT_EQ(output.find(kUserInfo), std::string::npos) << output;
  }
  EXPECT_EQ(files_holding(dir.path(), kPassword), std::vector<std::string>{});

  // The page, opened where its name cannot confuse a file:// URL.
  const auto page = dir / "report.html";
  fs::copy_file(root / "report.html", page);
  const auto html = slurp(page);
  ASSERT_NE(html.find("&lt;!--&lt;script&gt;"), std::string::npos);  // the title, escaped
  std::string dom;
  ASSERT_EQ(testing::run_command("timeout 120 chromium --headless --no-sandbox --disable-gpu "
                                 "--disable-dev-shm-usage --virtual-time-budget=10000 --dump-dom "
                                 "file://" +
                                     page.string() + " 2>/dev/null",
                                 &dom),
            0);
  EXPECT_NE(dom.find("data-status=\"ready\""), std::string::npos) << dom.substr(0, 3000);
  EXPECT_NE(dom.find("data-errors=\"0\""), std::string::npos) << dom.substr(0, 3000);
  for (const char* chart : {"loss-student_normal", "roc-validation", "roc-test_01__b__"})
    EXPECT_NE(dom.find(chart), std::string::npos) << chart;
}

// --threads 100000 started threads at about 30 a second (5,000 reached 2,721 threads and 988 MB
// before the run was stopped). Capped at the cores, and said so. OMP_THREAD_LIMIT keeps a binary
// without the cap from starting them all: it would run, slowly, without the warning.
TEST(HostileNames, ThreadsFarAboveTheCoresAreCappedWithAWarning) {
  testing::TempDir dir;
  const auto data = dir / "data";
  run_printing_safely("generate",
                      headroom("generate --frames 20000 --out " + quoted(data.string())));
  const auto store = dir / "store";
  const auto cores = std::to_string(util::usable_cores());
  const auto preprocessed = run_printing_safely(
      "preprocess", "OMP_THREAD_LIMIT=16 timeout 300 " +
                        headroom("preprocess " + quoted(data.string()) + " --out " +
                                 quoted(store.string()) + " --threads 100000 --no-progress"));
  EXPECT_NE(preprocessed.find("--threads 100000 is more threads than the " + cores + " cores"),
            std::string::npos)
      << preprocessed;
  const auto trained = run_printing_safely(
      "normal",
      "OMP_THREAD_LIMIT=16 timeout 600 " +
          headroom("normal --preset gat,student --max-epochs 1 --batch-size 64 "
                   "--progress false --threads 100000 --store " +
                   quoted(store.string()) + " --runs-dir " + quoted((dir / "runs").string())));
  EXPECT_NE(trained.find("--threads 100000 is more threads than the " + cores +
                         " cores this process may run on: using " + cores),
            std::string::npos)
      << trained;
  const auto config = json::parse(slurp(dir / "runs" / "store" / "student_normal" / "config.json"));
  EXPECT_EQ(config["config"]["threads"].get<unsigned>(), util::usable_cores());
}

// Used to be skipped without a word: a FIFO (reading it could block forever), a link to
// /dev/zero (it never ends), a compressed log; and a test split with nothing in it. A name that is
// not UTF-8 used to end preprocessing with "[json.exception.type_error.316] invalid UTF-8 byte".
TEST(HostileNames, SplitEntriesThatAreNotReadAreNamed) {
  testing::TempDir dir;
  const auto data = dir / "data";
  run_printing_safely("generate",
                      headroom("generate --frames 20000 --out " + quoted(data.string())));
  const auto split = data / "test_01_known_vehicle_known_attack";
  ASSERT_EQ(::mkfifo((split / "pipe-1.csv").c_str(), 0600), 0);
  fs::create_symlink("/dev/zero", split / "zero-1.csv");
  ASSERT_EQ(testing::run_command("gzip -k " + quoted((split / "DoS-2.csv").string())), 0);
  fs::copy_file(split / "DoS-2.csv", split / "bad\xff-3.csv");  // a name that is not UTF-8
  fs::create_directories(data / "test_03_empty");
  const auto output = run_printing_safely(
      "preprocess",
      "timeout 300 " + headroom("preprocess " + quoted(data.string()) + " --out " +
                                quoted((dir / "store").string()) + " --threads 2 --no-progress"));
  const std::string prefix = "warning: test_01_known_vehicle_known_attack/";
  for (const auto& expected :
       {prefix + "pipe-1.csv: not read: a FIFO (named pipe), not a regular file",
        prefix + "zero-1.csv: not read: a character device, not a regular file",
        prefix + "DoS-2.csv.gz: not read: a compressed file (.gz)",
        prefix + "bad\\xFF-3.csv: not read: its name is not UTF-8",
        std::string("warning: test_03_empty: this test split holds no CAN log file")})
    EXPECT_NE(output.find(expected), std::string::npos) << expected << "\n" << output;
}

// `report` on run files that are not what it reads: an error naming the file, line and column,
// never a report silently missing its evaluation.
TEST(HostileNames, ReportRefusesMalformedRunFilesByName) {
  testing::TempDir dir;
  const auto stage = dir / "runs" / "stage";
  testing::write_text_file(stage / "metrics.jsonl", "{\"type\":\"epoch\",\"epoch\":0}\n");
  testing::write_text_file(stage / "config.json", "{\n  \"config\": {\"a\": 1,\n  ]\n}\n");
  std::string output;
  EXPECT_EQ(testing::run_command(headroom("report " + quoted(stage.string())), &output), 1);
  EXPECT_NE(output.find("headroom: error: " + (stage / "config.json").string() + ":3:3: not JSON"),
            std::string::npos)
      << output;

  fs::remove(stage / "config.json");
  for (const std::string text : {"null", "[]"}) {
    testing::write_text_file(dir / "runs" / "evaluation" / "evaluation.json", text);
    EXPECT_EQ(testing::run_command(headroom("report " + quoted((dir / "runs").string())), &output),
              1)
        << text;
    EXPECT_NE(output.find((dir / "runs" / "evaluation" / "evaluation.json").string() +
                          ": holds a JSON " + (text == "null" ? "null" : "array")),
              std::string::npos)
        << output;
  }
}

}  // namespace
}  // namespace headroom
