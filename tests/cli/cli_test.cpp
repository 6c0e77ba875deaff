// The headroom binary end to end: subcommands, exit codes, one-line errors, JSON output, config
// files and the CSV column mapping on the command line.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>

#include "test_support.hpp"

namespace headroom {
namespace {

using testing::run_command;
using testing::TempDir;
using testing::write_text_file;

std::string headroom(const std::string& args) {
  return fmt::format("'{}' {}", HEADROOM_BINARY, args);
}

int count_lines(const std::string& text) {
  int lines = 0;
  for (char c : text) lines += c == '\n';
  return lines;
}

TEST(HeadroomCli, EverySubcommandHasHelp) {
  for (const std::string sub : {"", "generate", "preprocess", "inspect", "run"}) {
    std::string output;
    EXPECT_EQ(run_command(headroom(sub + " --help"), &output), 0) << sub;
    EXPECT_NE(output.find("--help"), std::string::npos) << sub;
  }
  std::string output;
  run_command(headroom("preprocess --help"), &output);
  for (const char* flag :
       {"--window", "--stride", "--threads", "--on-bad-row", "--csv-id", "--attack-values"}) {
    EXPECT_NE(output.find(flag), std::string::npos) << flag;
  }
}

TEST(HeadroomCli, GeneratePreprocessInspectJson) {
  TempDir dir;
  std::string output;
  ASSERT_EQ(run_command(headroom(fmt::format("generate --out '{}' --frames 30000 --seed 3",
                                             (dir / "ds").string())),
                        &output),
            0)
      << output;
  ASSERT_EQ(run_command(headroom(fmt::format("preprocess '{}' --out '{}' --no-progress",
                                             (dir / "ds").string(), (dir / "store").string())),
                        &output),
            0)
      << output;
  EXPECT_NE(output.find("30000 rows"), std::string::npos) << output;

  ASSERT_EQ(run_command(headroom(fmt::format("inspect '{}' --json", (dir / "store").string())) +
                            " 2>/dev/null",
                        &output),
            0);
  const auto json = nlohmann::json::parse(output);
  std::uint64_t graphs = 0;
  std::uint64_t rows = 0;
  for (const auto& file : json["files"]) {
    const auto path = file["path"].get<std::string>();
    EXPECT_TRUE(path.rfind("train_", 0) == 0 || path.rfind("test_", 0) == 0) << path;
    EXPECT_TRUE(std::filesystem::exists(dir / "ds" / path)) << path;
    const auto file_rows = file["rows"].get<std::uint64_t>();
    EXPECT_EQ(file["graphs"].get<std::uint64_t>(),
              file_rows < 100 ? 1 : (file_rows - 100) / 100 + 1)
        << path;
    graphs += file["graphs"].get<std::uint64_t>();
    rows += file_rows;
  }
  EXPECT_EQ(rows, 30000U);
  EXPECT_EQ(json["graphs"].get<std::uint64_t>(), graphs);
  bool saw_validation = false;
  for (const auto& split : json["splits"]) {
    if (split["name"] == "validation") {
      saw_validation = true;
      EXPECT_GT(split["graphs"].get<int>(), 0);
      EXPECT_GE(split["nodes"]["max"].get<int>(), split["nodes"]["p95"].get<int>());
      EXPECT_GE(split["nodes"]["p95"].get<int>(), split["nodes"]["p50"].get<int>());
    }
  }
  EXPECT_TRUE(saw_validation);
  EXPECT_GT(json["bytes_on_disk"].get<std::uint64_t>(), 0U);

  ASSERT_EQ(run_command(headroom(fmt::format("inspect '{}' --verify", (dir / "store").string())),
                        &output),
            0);
  EXPECT_NE(output.find("verified"), std::string::npos);
}

TEST(HeadroomCli, ErrorsAreOneLineWithNonZeroExit) {
  TempDir dir;
  std::string output;
  EXPECT_EQ(run_command(headroom(fmt::format("preprocess '{}' --out '{}'", (dir / "nope").string(),
                                             (dir / "s").string())),
                        &output),
            1);
  EXPECT_EQ(count_lines(output), 1) << output;
  EXPECT_NE(output.find("does not exist"), std::string::npos) << output;

  write_text_file(dir / "ds/train_01/a-1.csv",
                  "timestamp,arbitration_id,data_field,attack\n1.0,100,0011,0\n1.1,100,00112,0\n");
  EXPECT_EQ(run_command(headroom(fmt::format("preprocess '{}' --out '{}'", (dir / "ds").string(),
                                             (dir / "s").string())),
                        &output),
            1);
  EXPECT_EQ(count_lines(output), 1) << output;
  EXPECT_NE(output.find("a-1.csv:3"), std::string::npos) << output;
  EXPECT_NE(output.find("data_field"), std::string::npos) << output;
  EXPECT_FALSE(std::filesystem::exists(dir / "s"));

  EXPECT_EQ(
      run_command(headroom(fmt::format("preprocess '{}' --out '{}' --on-bad-row skip --no-progress",
                                       (dir / "ds").string(), (dir / "s").string())),
                  &output),
      0)
      << output;
  EXPECT_NE(output.find("skipped 1 malformed row"), std::string::npos) << output;

  EXPECT_EQ(run_command(headroom(fmt::format("inspect '{}'", (dir / "ds").string())), &output), 1);
  EXPECT_NE(output.find("not a complete graph store"), std::string::npos) << output;
}

TEST(HeadroomCli, ConfigFileAndColumnMapping) {
  TempDir dir;
  // A CSV no preset knows: semicolons, decimal IDs, one column per byte, text labels.
  std::string rows = "Time;Ident;Len;B0;B1;Class\n";
  for (int i = 0; i < 260; ++i) {
    rows += fmt::format("{}.0;{};2;{:02x};ff;{}\n", i, 100 + i % 5, i % 256,
                        i >= 150 && i < 160 ? "Fuzzing" : "Normal");
  }
  write_text_file(dir / "ds/train_01/odd-1.csv", rows);
  write_text_file(dir / "config.toml", R"([preprocess]
window = 50
stride = 50
format = "csv"
csv-delimiter = ";"
csv-timestamp = "Time"
csv-id = "Ident"
csv-id-base = "dec"
csv-dlc = "Len"
csv-payload-bytes = ["B0", "B1"]
csv-label = "Class"
attack-values = ["fuzzing"]
normal-values = ["normal"]
)");
  std::string output;
  ASSERT_EQ(
      run_command(headroom(fmt::format("preprocess '{}' --out '{}' --config '{}' --no-progress",
                                       (dir / "ds").string(), (dir / "s").string(),
                                       (dir / "config.toml").string())),
                  &output),
      0)
      << output;
  ASSERT_EQ(
      run_command(headroom(fmt::format("inspect '{}' --json", (dir / "s").string())), &output), 0);
  const auto json = nlohmann::json::parse(output);
  EXPECT_EQ(json["window"].get<int>(), 50);
  EXPECT_EQ(json["graphs"].get<int>(), 5);  // (260-50)//50+1
  EXPECT_EQ(json["vocabulary_size"].get<int>(), 5);
  int attack_graphs = 0;
  for (const auto& split : json["splits"]) {
    if (split["name"] == "train" || split["name"] == "validation")
      attack_graphs += split["attack_graphs"].get<int>();
  }
  EXPECT_EQ(attack_graphs, 1);  // rows 150..159 fall in window 3 only
}

// can-train-and-test rows, attacks in every other block of 50 when `attacks` is set; `start` keeps
// files apart (two equal training files would be left out as duplicates).
std::string labelled_rows(int rows, bool attacks, double start) {
  std::string text = "timestamp,arbitration_id,data_field,attack\n";
  for (int i = 0; i < rows; ++i)
    text += fmt::format("{:.3f},{:X},0102{:02X},{}\n", start + 0.001 * i, 0x100 + i % 6, i % 256,
                        attacks && (i / 50) % 2 == 1 ? 1 : 0);
  return text;
}

// One public dataset writes the DLC in bits (64 for every frame): refused with the flag that reads
// it, and read with that flag.
TEST(HeadroomCli, DlcInBitsIsReadWithCsvDlcUnitBits) {
  TempDir dir;
  std::string rows = "id,dlc,data\n";
  for (int i = 0; i < 300; ++i)
    rows += fmt::format("{:X},64,01020304050607{:02X}\n", 0x100 + i % 7, i % 256);
  write_text_file(dir / "ds/train_01/bits-1.csv", rows);
  const std::string mapped = fmt::format(
      "preprocess '{}' --out '{}' --no-progress --format csv --csv-id id --csv-dlc dlc "
      "--csv-payload data",
      (dir / "ds").string(), (dir / "s").string());
  std::string output;
  EXPECT_EQ(run_command(headroom(mapped), &output), 1);
  EXPECT_NE(output.find("bits-1.csv:2: column 'dlc': DLC 64 out of range 0..8 (a length in bits? "
                        "--csv-dlc-unit bits reads it as 8 bytes)"),
            std::string::npos)
      << output;
  ASSERT_EQ(run_command(headroom(mapped + " --csv-dlc-unit bits"), &output), 0) << output;
  EXPECT_NE(output.find("300 rows"), std::string::npos) << output;
  // The unit belongs to a column mapping.
  EXPECT_EQ(run_command(headroom(fmt::format("preprocess '{}' --out '{}' --csv-dlc-unit bits",
                                             (dir / "ds").string(), (dir / "t").string())),
                        &output),
            1);
  EXPECT_NE(output.find("need --format csv"), std::string::npos) << output;
}

// A directory linked into a split is read; a link back up (a cycle) is read once and said so.
TEST(HeadroomCli, LinkedDirectoriesAreReadAndACycleIsReported) {
  TempDir dir;
  write_text_file(dir / "ds/train_01/own-1.csv", labelled_rows(300, false, 1000));
  write_text_file(dir / "elsewhere/more-1.csv", labelled_rows(300, false, 2000));
  std::filesystem::create_directory_symlink(dir / "elsewhere", dir / "ds/train_01/linked");
  std::filesystem::create_directory_symlink(dir / "elsewhere", dir / "elsewhere/loop");
  std::string output;
  ASSERT_EQ(run_command(headroom(fmt::format("preprocess '{}' --out '{}' --no-progress",
                                             (dir / "ds").string(), (dir / "s").string())),
                        &output),
            0)
      << output;
  EXPECT_NE(output.find("preprocessed 2 files, 600 rows"), std::string::npos) << output;
  EXPECT_NE(output.find("warning: train_01/linked/loop: not read again: the same directory as "
                        "train_01/linked"),
            std::string::npos)
      << output;
}

// Attack types named by the directories of the layout; a drive without attacks is attack-free.
TEST(HeadroomCli, AttackTypeFromDirectoryAndAttackFreeByLabels) {
  TempDir dir;
  write_text_file(dir / "ds/train_01/drive-1.csv", labelled_rows(400, false, 1000));
  write_text_file(dir / "ds/train_02/DoS/capture-1.csv", labelled_rows(400, true, 2000));
  write_text_file(dir / "ds/test_01/DoS/capture-2.csv", labelled_rows(400, true, 3000));
  std::string output;
  ASSERT_EQ(run_command(headroom(fmt::format(
                            "preprocess '{}' --out '{}' --no-progress --attack-type-from directory",
                            (dir / "ds").string(), (dir / "s").string())),
                        &output),
            0)
      << output;
  EXPECT_NE(output.find("note: train_01/drive-1.csv holds no attack frame: attack type "
                        "'attack-free' (its name says 'drive')"),
            std::string::npos)
      << output;
  ASSERT_EQ(run_command(
                headroom(fmt::format("inspect '{}' --json", (dir / "s").string())) + " 2>/dev/null",
                &output),
            0);
  const auto json = nlohmann::json::parse(output);
  std::map<std::string, std::string> types;
  for (const auto& file : json["files"])
    types[file["path"].get<std::string>()] = file["attack_type"].get<std::string>();
  EXPECT_EQ(types, (std::map<std::string, std::string>{{"test_01/DoS/capture-2.csv", "dos"},
                                                       {"train_01/drive-1.csv", "attack-free"},
                                                       {"train_02/DoS/capture-1.csv", "dos"}}));
}

}  // namespace
}  // namespace headroom
