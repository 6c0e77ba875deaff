// --config read strictly (cli/config_file.hpp), on a root app with two small subcommands, and
// through the real binaries for every subcommand that takes --config.
#include "headroom/cli/config_file.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace headroom::cli {
namespace {

using testing::TempDir;
using testing::write_text_file;

// What the `tool` subcommand's flags were set to.
struct ToolFlags {
  unsigned window = 100;
  double rate = 0.5;
  bool progress = true;
  bool force = false;
  std::string name = "default";
  std::vector<std::string> exclude = {"a", "b"};
  bool ran = false;
};

class ConfigFile : public ::testing::Test {
 protected:
  // Parses `headroom <args...> --config FILE` where FILE holds `text`.
  void parse(const std::string& text, std::vector<std::string> args = {"tool"}) {
    flags_.ran = false;
    write_text_file(file_, text);
    CLI::App app{"test"};
    add_config_file_option(app);
    app.require_subcommand(1);
    app.fallthrough();
    auto* tool = app.add_subcommand("tool");
    tool->add_option("--window", flags_.window);
    tool->add_option("--rate", flags_.rate)->check(CLI::PositiveNumber);
    tool->add_option("--progress", flags_.progress);
    tool->add_flag("--force", flags_.force);
    tool->add_option("--name", flags_.name);
    tool->add_option("--exclude", flags_.exclude)->delimiter(',');
    tool->callback([this] { flags_.ran = true; });
    int other_value = 0;
    app.add_subcommand("other")->add_option("--count", other_value);
    args.insert(args.begin(), "headroom");
    args.push_back("--config");
    args.push_back(file_.string());
    std::vector<const char*> argv;
    for (const auto& arg : args) argv.push_back(arg.c_str());
    app.parse(static_cast<int>(argv.size()), argv.data());
  }

  // The ConfigFileError that parsing `text` throws; a failure when there is none.
  ConfigFileError error(const std::string& text, std::vector<std::string> args = {"tool"}) {
    try {
      parse(text, std::move(args));
    } catch (const ConfigFileError& e) {
      EXPECT_FALSE(flags_.ran) << "the command ran despite the error";
      return e;
    }
    ADD_FAILURE() << "no ConfigFileError for:\n" << text;
    return ConfigFileError(file_, 0, "", "", "none");
  }

  // Expects parsing `text` to fail at `line` with a message holding every one of `parts`.
  void expect_error(const std::string& text, std::uint64_t line,
                    const std::vector<std::string>& parts) {
    const ConfigFileError e = error(text);
    const std::string what = e.what();
    EXPECT_EQ(e.line(), line) << what;
    const std::string where =
        line == 0 ? file_.string() + ": " : fmt::format("{}:{}: ", file_.string(), line);
    EXPECT_EQ(what.rfind(where, 0), 0U) << what;
    for (const auto& part : parts) EXPECT_NE(what.find(part), std::string::npos) << what;
  }

  TempDir dir_;
  std::filesystem::path file_ = dir_ / "settings.toml";
  ToolFlags flags_;
};

TEST_F(ConfigFile, ValidFileIsAppliedAndTheCommandLineWins) {
  parse(R"(# a comment
[tool]
window = 50
rate = 1e-3
progress = false
force = true
name = "run one"
exclude = ["x", "y"]

[other]
count = 3
)",
        {"tool", "--window", "70"});
  EXPECT_TRUE(flags_.ran);
  EXPECT_EQ(flags_.window, 70U);  // the command line's
  EXPECT_DOUBLE_EQ(flags_.rate, 1e-3);
  EXPECT_FALSE(flags_.progress);
  EXPECT_TRUE(flags_.force);
  EXPECT_EQ(flags_.name, "run one");
  EXPECT_EQ(flags_.exclude, (std::vector<std::string>{"x", "y"}));
}

TEST_F(ConfigFile, SyntaxErrorNamesTheLine) {
  expect_error("[tool]\nwindow = 50\nname = \"unterminated\n", 3, {"not valid TOML"});
  expect_error("[tool\nwindow = 50\n", 1, {"not valid TOML"});
  expect_error("[tool]\nwindow 50\n", 2, {"not valid TOML"});
  expect_error("[tool]\nwindow = 50\nwindow = 60\n", 3, {"not valid TOML"});  // a duplicate
}

TEST_F(ConfigFile, MisspeltKeyNamesTheLineAndSuggestsTheNearest) {
  expect_error("[tool]\nwindow = 50\nwindoww = 60\n", 3,
               {"[tool] 'windoww'", "has no such setting", "did you mean 'window'?"});
  expect_error("[tool]\nexcludes = [\"x\"]\n", 2, {"did you mean 'exclude'?"});
  // Nothing close: no guess, but where to look.
  expect_error("[tool]\nlearning-rate-schedule = 1\n", 2, {"see `headroom tool --help`"});
}

TEST_F(ConfigFile, UnknownSectionAndKeysOutsideASectionAreRefused) {
  expect_error("[tol]\nwindow = 50\n", 1,
               {"[tol] names no headroom command", "did you mean [tool]?"});
  expect_error("window = 50\n[tool]\n", 1, {"'window'", "put this key under [tool]"});
  expect_error("[[tool]]\nwindow = 50\n", 1, {"[[tool]] is not a section"});
}

TEST_F(ConfigFile, EmptyFileOrOneForAnotherCommandIsRefused) {
  expect_error("", 0, {"no [tool] section", "the file sets nothing"});
  expect_error("# only a comment\n\n", 0, {"no [tool] section", "the file sets nothing"});
  expect_error("[other]\ncount = 2\n", 0, {"no [tool] section", "has only [other]"});
  // A section with no keys is a deliberate choice of defaults.
  EXPECT_NO_THROW(parse("[tool]\n"));
  EXPECT_TRUE(flags_.ran);
}

TEST_F(ConfigFile, RandomBytesAreRefused) {
  std::mt19937 rng(15);
  for (int round = 0; round < 20; ++round) {
    std::string bytes(200 + round * 13, '\0');
    for (auto& c : bytes) c = static_cast<char>(rng());
    const ConfigFileError e = error(bytes);
    const std::string what = e.what();
    EXPECT_EQ(what.size(), std::strlen(e.what())) << "a NUL inside the message";
    for (const char c : what) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20) << what;
  }
}

TEST_F(ConfigFile, ValuesOfTheWrongKindNameTheLineAndKey) {
  expect_error("[tool]\nwindow = true\n", 2, {"'window'", "takes a number, not true/false"});
  expect_error("[tool]\nforce = \"yes\"\n", 2, {"'force'", "takes true or false"});
  expect_error("[tool]\nprogress = 1\n", 2, {"'progress'", "takes true or false"});
  expect_error("[tool]\nwindow = [1, 2]\n", 2, {"'window'", "takes one value, not a list"});
  expect_error("[tool]\nexclude = []\n", 2, {"'exclude'", "an empty list sets nothing"});
  expect_error("[tool]\nwindow = 1.5\n", 2, {"'window'", "1.5"});
  expect_error("[tool]\nwindow = \"many\"\n", 2, {"'window'", "many"});
  expect_error("[tool]\nrate = -2.0\n", 2, {"'rate'"});  // the flag's own check
  expect_error("[tool]\nname = { first = 1 }\n", 2, {"'name'", "is a table"});
  expect_error("[tool]\nname.first = 1\n", 2, {"'name'", "is a table"});
  expect_error("[tool]\nname = 1979-05-27\n", 2, {"'name'", "dates and times"});
  expect_error("[tool]\nexclude = [[\"x\"]]\n", 2, {"'exclude'", "a list inside a list"});
}

TEST_F(ConfigFile, OtherCommandsSectionsAreCheckedByName) {
  // A file may serve several commands; a section is checked in full when its command runs.
  EXPECT_NO_THROW(parse("[tool]\nwindow = 5\n[other]\nunknown-to-other = 1\n"));
  EXPECT_EQ(flags_.window, 5U);
  const ConfigFileError e = error("[other]\ncounnt = 1\n[tool]\n", {"other"});
  EXPECT_EQ(e.line(), 2U);
  EXPECT_NE(std::string(e.what()).find("did you mean 'count'?"), std::string::npos) << e.what();
}

TEST_F(ConfigFile, ErrorTextIsEscapedAndBounded) {
  const ConfigFileError controls = error("[tool]\n\"win\\u001b[31mdow\\u0000\" = 5\n");
  const std::string what = controls.what();
  EXPECT_NE(what.find("win\\x1B[31mdow\\x00"), std::string::npos) << what;
  EXPECT_EQ(what.size(), std::strlen(controls.what()));

  // Under the 1 MiB a config file may be (a larger one is refused by its size before it is read).
  const ConfigFileError huge = error("[tool]\nwindow = \"" + std::string(900'000, '9') + "x\"\n");
  EXPECT_LT(std::string(huge.what()).size(), 1000U);
  EXPECT_NE(std::string(huge.what()).find("bytes cut"), std::string::npos) << huge.what();
}

}  // namespace
}  // namespace headroom::cli
