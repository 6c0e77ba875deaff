// What lies at a path headroom reads or writes, against an adversarial user (issue 45, items 2,
// 4 and 11), on the real binary: a symbolic or hard link planted at a file a stage appends to; a
// FIFO or a device where headroom reads a run file, a --config, a graph table or a CAN log; an
// empty staging directory that a kill left. Every command runs under `timeout`, so a read that
// blocks fails the test (status 124) instead of hanging it.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

#include "headroom/baseline/store_baseline.hpp"
#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/synthetic/synthetic_traffic.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::run_command;
using testing::TempDir;
using testing::write_text_file;

std::string headroom(const std::string& args) {
  return fmt::format("timeout 120 '{}' {} 2>&1", HEADROOM_BINARY, args);
}

void make_fifo(const fs::path& path) { ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << path; }

// `command` failed at once (not cut off by `timeout`) with one error line naming `path` and
// `what`.
void expect_refused(int status, const std::string& output, const fs::path& path,
                    const std::string& what) {
  EXPECT_NE(status, 124) << "it blocked until the time limit:\n" << output;
  EXPECT_EQ(status, 1) << output;
  EXPECT_NE(output.find("headroom: error: "), std::string::npos) << output;
  EXPECT_NE(output.find(path.string()), std::string::npos) << path << "\n" << output;
  EXPECT_NE(output.find(what), std::string::npos) << what << "\n" << output;
}

// Runs `call` in a child process; true when it returned within `limit`. A call that blocks is
// killed, so the test fails instead of hanging.
bool returns_within(std::chrono::seconds limit, const std::function<bool()>& call) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    bool ok = false;
    try {
      ok = call();
    } catch (...) {
    }
    ::_exit(ok ? 0 : 3);
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A small synthetic dataset and its store; the stage trains one small epoch on it.
class HostileFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string output;
    ASSERT_EQ(run_command(headroom(fmt::format("generate --out '{}' --frames 12000 --seed 3",
                                               data_.string())),
                          &output),
              0)
        << output;
    ASSERT_EQ(run_command(headroom(fmt::format("preprocess '{}' --out '{}' --no-progress",
                                               data_.string(), store_.string())),
                          &output),
              0)
        << output;
  }

  // The same command each time: a rerun finds the stage complete and logs that it is.
  std::string normal() const {
    return headroom(fmt::format(
        "normal --store '{}' --runs-dir '{}' --preset gat,student --threads 1 --progress false "
        "--max-epochs 1 --batch-size 64",
        store_.string(), runs_.string()));
  }

  TempDir dir_;
  fs::path data_ = dir_ / "data";
  fs::path store_ = dir_ / "store";
  fs::path runs_ = dir_ / "runs";
  fs::path stage_ = runs_ / "store" / "student_normal";
};

// Item 2: `ln -s ~/victim.txt RUN/STAGE/log.txt`, and the next stage appended 15 lines to the
// victim. log.txt and metrics.jsonl, as a symbolic link or a second hard link, are refused
// before the stage trains, and the file they name is left as it was.
TEST_F(HostileFiles, LinkedLogAndMetricsAreRefusedAndTheirTargetsUntouched) {
  std::string output;
  ASSERT_EQ(run_command(normal(), &output), 0) << output;
  const auto victim = dir_ / "victim.txt";
  write_text_file(victim, "precious\n");

  fs::rename(stage_ / "log.txt", dir_ / "log.txt");
  fs::create_symlink(victim, stage_ / "log.txt");
  expect_refused(run_command(normal(), &output), output, stage_ / "log.txt",
                 "a symbolic link, not a regular file");
  EXPECT_EQ(read_bytes(victim), "precious\n");
  fs::remove(stage_ / "log.txt");
  fs::create_hard_link(victim, stage_ / "log.txt");
  expect_refused(run_command(normal(), &output), output, stage_ / "log.txt", "has 2 hard links");
  EXPECT_EQ(read_bytes(victim), "precious\n");
  fs::remove(stage_ / "log.txt");
  fs::rename(dir_ / "log.txt", stage_ / "log.txt");

  // metrics.jsonl, moved aside and linked back: the stage would read it and append to it.
  const auto metrics = read_bytes(stage_ / "metrics.jsonl");
  const auto aside = dir_ / "metrics.jsonl";
  fs::rename(stage_ / "metrics.jsonl", aside);
  fs::create_symlink(aside, stage_ / "metrics.jsonl");
  expect_refused(run_command(normal(), &output), output, stage_ / "metrics.jsonl",
                 "a symbolic link, not a regular file");
  fs::remove(stage_ / "metrics.jsonl");
  fs::create_hard_link(aside, stage_ / "metrics.jsonl");
  expect_refused(run_command(normal(), &output), output, stage_ / "metrics.jsonl",
                 "has 2 hard links");
  EXPECT_EQ(read_bytes(aside), metrics);
  EXPECT_EQ(read_bytes(victim), "precious\n");

  // Its own files back in place: the stage is found complete, and says so in its own log.
  fs::remove(stage_ / "metrics.jsonl");
  fs::rename(aside, stage_ / "metrics.jsonl");
  ASSERT_EQ(run_command(normal(), &output), 0) << output;
  EXPECT_NE(read_bytes(stage_ / "log.txt").find("already complete"), std::string::npos);
  EXPECT_EQ(testing::read_metrics(stage_ / "metrics.jsonl").size(), 1U);
}

// Item 4: `report` on a run whose config.json or result.json links to /dev/zero or /dev/urandom
// read until allocation failed; a FIFO as metrics.jsonl blocked it forever.
TEST(HostileFileReads, ReportRefusesRunFilesThatAreFifosOrDevices) {
  TempDir dir;
  const auto stage = dir / "run" / "student_normal";
  const auto epoch = std::string(R"({"type":"epoch","epoch":0,"train_loss":0.5,"steps":2})") + "\n";
  const auto refused = [&](const fs::path& file, const std::string& what) {
    std::string output;
    expect_refused(run_command(headroom(fmt::format("report '{}'", stage.string())), &output),
                   output, file, what);
    EXPECT_FALSE(fs::exists(stage / "report.html"));
    fs::remove(file);
  };
  write_text_file(stage / "metrics.jsonl", epoch);
  fs::create_symlink("/dev/zero", stage / "config.json");
  refused(stage / "config.json", "a character device, not a regular file");
  fs::create_symlink("/dev/urandom", stage / "result.json");
  refused(stage / "result.json", "a character device, not a regular file");
  make_fifo(stage / "evaluation.json");
  refused(stage / "evaluation.json", "a FIFO (named pipe), not a regular file");
  fs::remove(stage / "metrics.jsonl");
  make_fifo(stage / "metrics.jsonl");
  refused(stage / "metrics.jsonl", "a FIFO (named pipe), not a regular file");

  // The same run with plain files is reported.
  write_text_file(stage / "metrics.jsonl", epoch);
  std::string output;
  EXPECT_EQ(run_command(headroom(fmt::format("report '{}'", stage.string())), &output), 0)
      << output;
}

// Found while writing the run-directory fuzzer: run files of another shape made `report` fail
// with a bare library message (`[json.exception.type_error.302] type must be number, but is
// string`), and one nested 100,000 levels deep overflowed the stack. Values of another type are
// shown as missing; a document nested that deep is refused by name.
TEST(HostileFileReads, ReportShowsRunFilesOfAnyShapeOrRefusesThemByName) {
  TempDir dir;
  const auto stage = dir / "run" / "student_normal";
  write_text_file(stage / "metrics.jsonl",
                  R"({"type":"epoch","steps":9223372036854775807,"oom_events":"many"})"
                  "\n"
                  R"({"type":"epoch","steps":9223372036854775807,"split_steps":1e300})"
                  "\n"
                  R"({"type":"step","step":"two"})"
                  "\n");
  write_text_file(stage / "result.json",
                  R"({"training":{"best_epoch":"x","seconds":[1],"peak_tensor_bytes":{}}})");
  write_text_file(stage / "config.json", R"({"config":7})");
  std::string output;
  EXPECT_EQ(run_command(headroom(fmt::format("report '{}'", stage.string())), &output), 0)
      << output;
  EXPECT_TRUE(fs::exists(stage / "report.html")) << output;
  fs::remove(stage / "report.html");

  // A number past a double: nlohmann's out_of_range, once printed without the file's name.
  const auto metrics = read_bytes(stage / "metrics.jsonl");
  write_text_file(stage / "metrics.jsonl",
                  std::string(R"({"type":"epoch","steps":1e400})") + "\n" + metrics);
  expect_refused(run_command(headroom(fmt::format("report '{}'", stage.string())), &output), output,
                 stage / "metrics.jsonl", ":1: not JSON headroom can read: number overflow");
  write_text_file(stage / "metrics.jsonl", metrics);

  // Inside "config", which the report keeps (a segmentation fault before the depth limit).
  write_text_file(stage / "config.json",
                  R"({"config":)" + std::string(100'000, '[') + std::string(100'000, ']') + "}");
  expect_refused(run_command(headroom(fmt::format("report '{}'", stage.string())), &output), output,
                 stage / "config.json", "nested more than 128 levels deep");
}

// Item 4: `--config /dev/zero` ended in std::bad_alloc and a FIFO as --config blocked forever. A
// config file reached through a link the user made is still read.
TEST(HostileFileReads, ConfigThatIsAFifoOrADeviceIsRefusedAndALinkIsRead) {
  TempDir dir;
  const auto fifo = dir / "config.toml";
  make_fifo(fifo);
  const auto generate = [&](const fs::path& config) {
    std::string output;
    const int status = run_command(headroom(fmt::format("generate --config '{}' --out '{}'",
                                                        config.string(), (dir / "gen").string())),
                                   &output);
    return std::make_pair(status, output);
  };
  auto [status, output] = generate(fifo);
  expect_refused(status, output, fifo, "a FIFO (named pipe), not a regular file");
  std::tie(status, output) = generate("/dev/zero");
  expect_refused(status, output, "/dev/zero", "a character device, not a regular file");
  fs::create_symlink("/dev/urandom", dir / "random.toml");
  std::tie(status, output) = generate(dir / "random.toml");
  expect_refused(status, output, dir / "random.toml", "a character device, not a regular file");
  write_text_file(dir / "huge.toml", "");
  fs::resize_file(dir / "huge.toml", std::uintmax_t{1} << 30);  // sparse: no disk used
  std::tie(status, output) = generate(dir / "huge.toml");
  expect_refused(status, output, dir / "huge.toml", "larger than the 1.0 MiB a config file");
  EXPECT_FALSE(fs::exists(dir / "gen"));

  write_text_file(dir / "real.toml", "[generate]\nframes = 2000\nseed = 4\n");
  fs::create_symlink(dir / "real.toml", dir / "link.toml");
  std::tie(status, output) = generate(dir / "link.toml");
  EXPECT_EQ(status, 0) << output;
  EXPECT_TRUE(fs::exists(dir / "gen" / "synthetic.json")) << output;
}

// Item 4: a FIFO as a graph table blocked `import-graphs` in Arrow's open.
TEST(HostileFileReads, GraphTableThatIsAFifoIsRefusedByName) {
  TempDir dir;
  std::string output;
  ASSERT_EQ(
      run_command(std::string(HEADROOM_PYTHON) + " " + HEADROOM_SOURCE_DIR +
                      "/tests/graph_tables/graph_table_fixtures.py " + (dir / "tables").string(),
                  &output),
      0)
      << output;
  const auto tables = dir / "tables" / "missing_edges";  // graphs and nodes, no edges
  make_fifo(tables / "edges.parquet");
  expect_refused(run_command(headroom(fmt::format("import-graphs '{}' --out '{}'", tables.string(),
                                                  (dir / "store").string())),
                             &output),
                 output, tables / "edges.parquet", "a FIFO (named pipe), not a regular file");
  EXPECT_FALSE(fs::exists(dir / "store"));
}

// Item 4: `evaluation` blocked forever when a store's source CAN file had since become a FIFO (the
// baseline reads the files back). It is now refused by name, and evaluation goes on without the
// baseline, as for a file that is gone.
TEST(HostileFileReads, BaselineRefusesASourceFileThatBecameAFifoOrADevice) {
  TempDir dir;
  synthetic::generate_synthetic_dataset(dir / "data", {.seed = 3, .total_frames = 12'000}, false);
  preprocess::PreprocessOptions options;
  options.progress = 0;
  preprocess::preprocess_dataset(dir / "data", dir / "store", options);
  const auto store = store::GraphStore::open(dir / "store");
  const auto& file = store.metadata().files.front().path;
  const auto source = fs::path(store.metadata().dataset_root) / file;
  const auto refused_naming = [&](const std::string& what) {
    try {
      baseline::score_store_windows(store, store.test_ids());
    } catch (const baseline::BaselineUnavailable& e) {
      const std::string message = e.what();
      return message.find(file) != std::string::npos && message.find(what) != std::string::npos;
    }
    return false;
  };
  fs::remove(source);
  make_fifo(source);
  EXPECT_TRUE(returns_within(std::chrono::seconds(60), [&] {
    return refused_naming("a FIFO (named pipe), not a regular file");
  })) << "blocked, or not refused naming the file and the FIFO";
  fs::remove(source);
  fs::create_symlink("/dev/zero", source);
  EXPECT_TRUE(returns_within(std::chrono::seconds(60), [&] {
    return refused_naming("a character device, not a regular file");
  })) << "read without end, or not refused naming the file and the device";
}

// Item 11: `kill -9` between the staging directory's mkdir and its marker's write left an empty
// staging directory that every later run warned about and never removed. The next run removes
// it, silently; one holding anything else stays, named in a warning.
TEST(HostileFileWrites, AnEmptyStagingDirectoryAKillLeftIsRemovedByTheNextRun) {
  TempDir dir;
  const auto empty = dir / "gen.tmp-headroom-999999999-0123456789abcdef";
  const auto foreign = dir / "gen.tmp-headroom-999999998-0123456789abcdef";
  fs::create_directory(empty);
  write_text_file(foreign / "notes.txt", "mine");
  std::string output;
  ASSERT_EQ(run_command(
                headroom(fmt::format("generate --out '{}' --frames 2000", (dir / "gen").string())),
                &output),
            0)
      << output;
  EXPECT_FALSE(fs::exists(empty)) << output;
  EXPECT_EQ(output.find(empty.filename().string()), std::string::npos) << output;
  EXPECT_EQ(read_bytes(foreign / "notes.txt"), "mine");
  EXPECT_NE(output.find("warning: left '" + foreign.string() + "' in place"), std::string::npos)
      << output;
}

}  // namespace
}  // namespace headroom
