// --config through the binaries: every subcommand that takes it refuses a bad file before it does
// anything, with one line naming the file, the line and the key.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_support.hpp"

namespace headroom {
namespace {

using testing::run_command;
using testing::TempDir;
using testing::write_text_file;

int count_lines(const std::string& text) {
  int lines = 0;
  for (const char c : text) lines += c == '\n';
  return lines;
}

// `headroom` hands the training subcommands to `headroom-train`; both read --config the same way.
constexpr const char* kCommands[] = {"generate", "preprocess",  "inspect",    "report",
                                     "run",      "autoencoder", "curriculum", "normal",
                                     "fusion",   "evaluation",  "plan"};

TEST(ConfigCli, EveryCommandRefusesAMisspeltKey) {
  TempDir dir;
  for (const std::string command : kCommands) {
    const auto file = dir / (command + ".toml");
    write_text_file(file, fmt::format("[{}]\n# the next key is misspelt\nthreadz = 2\n", command));
    std::string output;
    EXPECT_EQ(run_command(fmt::format("cd '{}' && '{}' {} --config '{}'", dir.path().string(),
                                      HEADROOM_BINARY, command, file.string()),
                          &output),
              1)
        << command << ": " << output;
    EXPECT_EQ(count_lines(output), 1) << output;
    EXPECT_NE(output.find(fmt::format("{}:3: [{}] 'threadz': `headroom {}` has no such setting",
                                      file.string(), command, command)),
              std::string::npos)
        << output;
    // Every command with a thread count is offered it.
    if (command != "generate" && command != "inspect" && command != "report") {
      EXPECT_NE(output.find("did you mean 'threads'?"), std::string::npos) << output;
    }
  }
}

// The cases that used to run with defaults: nothing is written, the error says why.
TEST(ConfigCli, BrokenFilesStopPreprocessBeforeItWrites) {
  TempDir dir;
  write_text_file(dir / "ds/train_01/a-1.csv",
                  "timestamp,arbitration_id,data_field,attack\n1.0,100,0011,0\n1.1,100,0011,0\n");
  struct Case {
    std::string name, text, expected;
  };
  const Case cases[] = {
      {"syntax", "[preprocess\nwindow = 2\n", "syntax.toml:1: not valid TOML"},
      {"typo", "[preprocess]\nwindoww = 2\n", "typo.toml:2: [preprocess] 'windoww'"},
      {"random", std::string("\x8f\x01\xfe[z\0=\x7f\"", 10), "random.toml:1: not valid TOML"},
      {"empty", "", "empty.toml: no [preprocess] section"},
      {"other", "[curriculum]\nmax-epochs = 2\n", "other.toml: no [preprocess] section"},
      {"type", "[preprocess]\nforce = \"yes\"\n", "type.toml:2: [preprocess] 'force'"},
      {"top", "window = 2\n", "top.toml:1: 'window': settings go in a section"},
  };
  for (const auto& c : cases) {
    const auto file = dir / (c.name + ".toml");
    write_text_file(file, c.text);
    std::string output;
    EXPECT_EQ(run_command(fmt::format("'{}' preprocess '{}' --out '{}' --config '{}' --no-progress",
                                      HEADROOM_BINARY, (dir / "ds").string(),
                                      (dir / "store").string(), file.string()),
                          &output),
              1)
        << c.name << ": " << output;
    EXPECT_NE(output.find(dir.path().string() + "/" + c.expected), std::string::npos)
        << c.name << ": " << output;
    EXPECT_FALSE(std::filesystem::exists(dir / "store")) << c.name;
  }
}

}  // namespace
}  // namespace headroom
