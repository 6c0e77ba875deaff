// The last minor findings of issue 45's adversarial probe, on the real binaries: an integer flag of
// a 32-bit type given a value past it, a memory budget error printed with the program's name
// twice, one model given twice to evaluation, and a synthetic dataset larger than its disk.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>
#include <string_view>

#include "headroom/synthetic/synthetic_traffic.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::run_command;
using testing::TempDir;
using testing::write_text_file;

// A command that hangs where it should fail is cut off (exit 124); one that crashes exits 128+N.
std::string command(const char* binary, const std::string& args) {
  return fmt::format("timeout 300 '{}' {} 2>&1", binary, args);
}

// Runs `args` on `binary`, expects it to fail with every one of `expected` in its output, and
// returns the output.
std::string expect_refused(const char* binary, const std::string& args,
                           std::initializer_list<std::string_view> expected) {
  std::string output;
  const int status = run_command(command(binary, args), &output);
  // An error (1, or CLI11's code for a flag's value), not a crash (128 + signal) or a hang (124).
  EXPECT_TRUE(status == 1 || status == static_cast<int>(CLI::ExitCodes::ValidationError))
      << "exit " << status << ": " << args << "\n"
      << output;
  for (const auto& text : expected)
    EXPECT_NE(output.find(text), std::string::npos) << args << "\nexpected: " << text << "\n"
                                                    << output;
  EXPECT_EQ(output.find("Could not convert"), std::string::npos) << args << "\n" << output;
  return output;
}

// The line of `output` holding `text` (empty when none does).
std::string line_with(const std::string& output, std::string_view text) {
  const auto at = output.find(text);
  if (at == std::string::npos) return {};
  const auto start = output.rfind('\n', at);
  const auto begin = start == std::string::npos ? 0 : start + 1;
  return output.substr(begin, output.find('\n', at) - begin);
}

class HostileProbeTail : public ::testing::Test {
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
TempDir* HostileProbeTail::dir_ = nullptr;
fs::path HostileProbeTail::store_;

// A value that fits 64 bits but not the flag's own 32-bit type (`--window 5000000000`,
// `--threads 3000000000`) was CLI11's bare "Could not convert: --window = 5000000000". Each flag
// names its own type's range, on both binaries and in a config file; the largest value of the
// range is taken.
TEST_F(HostileProbeTail, AnIntegerFlagNamesTheRangeOfItsOwnType) {
  TempDir work;
  const auto data = (work / "data").string();
  const auto out = (work / "out").string();
  const auto store = store_.string();
  constexpr std::string_view kUnsigned32 = "is out of range: a whole number from 0 to 4294967295";
  constexpr std::string_view kSigned32 =
      "is out of range: a whole number from -2147483648 to 2147483647";
  for (const char* binary : {HEADROOM_BINARY, HEADROOM_TRAIN_BINARY}) {
    expect_refused(binary, fmt::format("preprocess '{}' --out '{}' --window 5000000000", data, out),
                   {"--window: '5000000000' ", kUnsigned32});
    expect_refused(binary, fmt::format("preprocess '{}' --out '{}' --stride 4294967296", data, out),
                   {"--stride: '4294967296' ", kUnsigned32});
    expect_refused(binary,
                   fmt::format("preprocess '{}' --out '{}' --text-min-count 5000000000", data, out),
                   {"--text-min-count: '5000000000' ", kUnsigned32});
    expect_refused(binary, fmt::format("run '{}' --window 5000000000", data),
                   {"--window: '5000000000' ", kUnsigned32});
    expect_refused(binary, fmt::format("normal --store '{}' --threads 3000000000", store),
                   {"--threads: '3000000000' ", kSigned32});
    expect_refused(binary, fmt::format("plan --store '{}' --threads 2147483648", store),
                   {"--threads: '2147483648' ", kSigned32});
    expect_refused(binary, fmt::format("evaluation --store '{}' --threads 3000000000", store),
                   {"--threads: '3000000000' ", kSigned32});
  }
  // Leading zeros and a '+' are dropped before the range is named.
  expect_refused(HEADROOM_BINARY,
                 fmt::format("preprocess '{}' --out '{}' --window +005000000000", data, out),
                 {"--window: '5000000000' ", kUnsigned32});
  write_text_file(work / "config.toml", "[preprocess]\nwindow = 5000000000\n");
  expect_refused(HEADROOM_BINARY,
                 fmt::format("--config '{}' preprocess '{}' --out '{}'",
                             (work / "config.toml").string(), data, out),
                 {"window", kUnsigned32});
  // The top of the range passes the flag: what fails next is the missing dataset.
  const auto output = expect_refused(
      HEADROOM_BINARY, fmt::format("preprocess '{}' --out '{}' --window 4294967295", data, out),
      {"data"});
  EXPECT_EQ(output.find("out of range"), std::string::npos) << output;
  EXPECT_FALSE(fs::exists(out));
}

// Found re-probing: every FLOAT and BOOLEAN flag said CLI11's bare "Could not convert: --dropout =
// abc". Each names the value and what it takes, on both binaries and in a config file.
TEST_F(HostileProbeTail, AFloatOrBooleanFlagSaysWhatItTakes) {
  TempDir work;
  const auto store = store_.string();
  for (const char* binary : {HEADROOM_BINARY, HEADROOM_TRAIN_BINARY}) {
    expect_refused(binary, fmt::format("normal --store '{}' --dropout abc", store),
                   {"--dropout: 'abc' is not a number"});
    expect_refused(binary, fmt::format("autoencoder --store '{}' --learning-rate 1,,2", store),
                   {"--learning-rate: '1,,2' is not a number"});
    expect_refused(binary, fmt::format("run '{}' --weight-decay /dev/null", work.path().string()),
                   {"--weight-decay: '/dev/null' is not a number"});
    expect_refused(binary, fmt::format("normal --store '{}' --use-kd maybe", store),
                   {"--use-kd: 'maybe' is not true or false"});
    expect_refused(binary, fmt::format("plan --store '{}' --pack-batches nan", store),
                   {"--pack-batches: 'nan' is not true or false"});
  }
  write_text_file(work / "config.toml", "[normal]\ndropout = \"abc\"\n");
  expect_refused(
      HEADROOM_BINARY,
      fmt::format("--config '{}' normal --store '{}'", (work / "config.toml").string(), store),
      {"dropout", "'abc' is not a number"});
}

// `plan --memory-budget 1KB` printed "headroom: error: headroom: CPU tensor budget exceeded…":
// the counting allocator's message named the program, and the error printer named it again.
TEST_F(HostileProbeTail, ABudgetErrorNamesTheProgramOnce) {
  for (const char* binary : {HEADROOM_BINARY, HEADROOM_TRAIN_BINARY}) {
    const auto output = expect_refused(
        binary, fmt::format("plan --store '{}' --memory-budget 1KB --threads 1", store_.string()),
        {"CPU tensor budget exceeded"});
    EXPECT_TRUE(line_with(output, "CPU tensor budget exceeded")
                    .starts_with("headroom: error: CPU tensor budget exceeded: tried to allocate "))
        << output;
    EXPECT_EQ(output.find("headroom: headroom:"), std::string::npos) << output;
    EXPECT_EQ(output.find("error: headroom:"), std::string::npos) << output;
  }
}

// `evaluation --models X,X` (or X and ./X, or a link to X) evaluated X once, without a word. One
// checkpoint given twice is refused naming the flag and both spellings, before the evaluation's
// run directory is made; given once it is evaluated.
TEST_F(HostileProbeTail, OneModelGivenTwiceToEvaluationIsRefusedNamingIt) {
  TempDir work;
  const auto runs = work / "runs";
  std::string output;
  ASSERT_EQ(run_command(command(HEADROOM_TRAIN_BINARY,
                                fmt::format("autoencoder --preset vgae,student --vgae-hidden 32,16 "
                                            "--latent 8 --max-epochs 1 --batch-size 128 --threads "
                                            "1 --progress false --store '{}' --runs-dir '{}'",
                                            store_.string(), runs.string())),
                        &output),
            0)
      << output;
  const auto model = runs / "store" / "student_autoencoder";
  ASSERT_TRUE(fs::exists(model / "best.pt")) << output;
  fs::create_directory_symlink(model, work / "link_to_model");
  const auto evaluation = [&](const std::string& models) {
    return fmt::format(
        "evaluation --threads 1 --progress false --store '{}' --runs-dir '{}' "
        "--models '{}'",
        store_.string(), runs.string(), models);
  };
  const auto m = model.string();
  for (const auto& models :
       {m + "," + m, m + "," + (model.parent_path() / "." / model.filename()).string(),
        m + "," + (work / "link_to_model").string(), m + "," + (model / "best.pt").string()})
    expect_refused(HEADROOM_TRAIN_BINARY, evaluation(models),
                   {"--models: ", "are one checkpoint", "give each model once"});
  EXPECT_FALSE(fs::exists(runs / "store" / "evaluation"))
      << "a refused evaluation made its run directory";
  ASSERT_EQ(run_command(command(HEADROOM_TRAIN_BINARY, evaluation(m)), &output), 0) << output;
  EXPECT_TRUE(fs::exists(runs / "store" / "evaluation" / "student_autoencoder.json")) << output;
}

// `generate --frames 1000000000000` began writing about 40 TB. The dataset's size (its rows
// measured on the vehicle's traffic) is compared with the free space first, and a dataset that
// does not fit is refused before anything is created.
TEST_F(HostileProbeTail, GenerateRefusesADatasetItsFileSystemHasNoRoomFor) {
  TempDir work;
  const auto data = work / "deeper" / "data";
  const auto output = expect_refused(
      HEADROOM_BINARY, fmt::format("generate --out '{}' --frames 1000000000000", data.string()),
      {"1000000000000 frames need about ", "GiB, the file system holding", " free"});
  EXPECT_NE(output.find(data.string()), std::string::npos) << output;
  EXPECT_FALSE(fs::exists(data));
  EXPECT_TRUE(fs::is_empty(work.path())) << "the refusal created something";

  // The estimate is the size written, to a few percent: a generated dataset's rows.
  const synthetic::SyntheticDatasetOptions options{.seed = 3, .total_frames = 50'000};
  synthetic::generate_synthetic_dataset(data, options, false);
  std::uintmax_t csv_bytes = 0;
  for (const auto& entry : fs::recursive_directory_iterator(data))
    if (entry.path().extension() == ".csv") csv_bytes += entry.file_size();
  const double bytes_per_frame =
      static_cast<double>(csv_bytes) / static_cast<double>(options.total_frames);
  EXPECT_NEAR(synthetic::synthetic_bytes_per_frame(options.seed), bytes_per_frame,
              0.05 * bytes_per_frame);
  // Found re-probing: an --out below a device was "filesystem error: cannot create directories".
  // /dev itself is refused first where it is a devtmpfs (OutputSafetyCli.KernelFileSystems…), so
  // the file below which nothing can be made is a plain one here; /dev/null is still named.
  write_text_file(work / "plain", "x");
  for (const auto& args :
       {fmt::format("generate --out '{}' --frames 1000", (work / "plain" / "data").string()),
        fmt::format("preprocess '{}' --out '{}'", data.string(),
                    (work / "plain" / "store").string())})
    EXPECT_EQ(expect_refused(HEADROOM_BINARY, args, {"plain is not a directory"})
                  .find("filesystem error"),
              std::string::npos);
  for (const auto& args : {std::string("generate --out /dev/null/data --frames 1000"),
                           fmt::format("preprocess '{}' --out /dev/null/store", data.string())})
    EXPECT_EQ(expect_refused(HEADROOM_BINARY, args, {"/dev/null"}).find("filesystem error"),
              std::string::npos);
}

}  // namespace
}  // namespace headroom
