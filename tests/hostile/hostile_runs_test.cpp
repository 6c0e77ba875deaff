// Run directories and stores against what users do to them, on the real binaries: a store rebuilt
// under finished stages, two processes in one stage directory or one store, a --dataset that
// climbs out of --runs-dir, and values that the command line and a config file used to read
// differently (a negative seed, a float window).
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "headroom/util/exclusive_lock.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::run_command;
using testing::TempDir;
using testing::write_text_file;

// A held lock must not make a test hang: a command that waits where it should fail is cut off
// (and shows as exit 124).
std::string headroom(const std::string& args) {
  return fmt::format("timeout 300 '{}' {} 2>&1", HEADROOM_BINARY, args);
}

// Every regular file under `root` with its contents, so that a test sees any file written,
// removed or changed.
std::string tree_snapshot(const fs::path& root) {
  std::string snapshot;
  for (const auto& entry : fs::recursive_directory_iterator(root))
    if (entry.is_regular_file())
      snapshot += fs::relative(entry.path(), root).string() + "\n" + read_bytes(entry.path());
  return snapshot;
}

std::size_t epoch_lines(const fs::path& run_dir) {
  return testing::read_metrics(run_dir / "metrics.jsonl").size();
}

// A command running in the background, its output in a file that the test can watch.
class Background {
 public:
  Background(const std::string& command, fs::path log) : log_(std::move(log)) {
    thread_ = std::thread([this, command] {
      status_ = run_command("(" + command + ") > '" + log_.string() + "'");
      finished_ = true;
    });
  }
  ~Background() {
    if (thread_.joinable()) thread_.join();
  }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  // Whether `text` showed up in the output within a minute.
  bool wait_for_text(const std::string& text) const {
    for (int i = 0; i < 600; ++i) {
      if (read_bytes(log_).find(text) != std::string::npos) return true;
      if (finished_) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  bool finished() const { return finished_; }
  int join() {
    thread_.join();
    return status_;
  }

 private:
  fs::path log_;
  std::atomic<bool> finished_{false};
  int status_ = -1;
  std::thread thread_;
};

// A small synthetic dataset and its store; stages train one small epoch on it.
class HostileRuns : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string output;
    ASSERT_EQ(run_command(headroom(fmt::format("generate --out '{}' --frames 12000 --seed 3",
                                               data_.string())),
                          &output),
              0)
        << output;
    ASSERT_EQ(preprocess("", &output), 0) << output;
  }

  int preprocess(const std::string& extra, std::string* output) const {
    return run_command(headroom(fmt::format("preprocess '{}' --out '{}' --force --no-progress {}",
                                            data_.string(), store_.string(), extra)),
                       output);
  }

  // `length`: how long it trains.
  std::string normal_args(const std::string& extra = "",
                          const std::string& length = "--max-epochs 1 --batch-size 64") const {
    return fmt::format(
        "normal --store '{}' --runs-dir '{}' --preset gat,student --threads 1 --progress false {} "
        "{}",
        store_.string(), runs_.string(), length, extra);
  }
  std::string normal(const std::string& extra = "") const { return headroom(normal_args(extra)); }

  TempDir dir_;
  fs::path data_ = dir_ / "data";
  fs::path store_ = dir_ / "store";
  fs::path runs_ = dir_ / "runs";
  fs::path stage_ = runs_ / "store" / "student_normal";  // the run directory of normal()
};

// Issue 25, item 5: `headroom run D`, then the same with --window 50 --stride 50, rebuilt the
// store and then reported every stage "already complete", evaluating window-100 models on
// window-50 graphs.
TEST_F(HostileRuns, FinishedStageIsNotReusedOnAStoreBuiltWithAnotherWindow) {
  std::string output;
  ASSERT_EQ(run_command(normal(), &output), 0) << output;
  const auto trained = read_bytes(stage_ / "best.pt");

  ASSERT_EQ(preprocess("--window 50 --stride 50", &output), 0) << output;
  EXPECT_NE(run_command(normal(), &output), 0) << output;
  EXPECT_EQ(output.find("already complete"), std::string::npos) << output;
  EXPECT_NE(output.find("store.window (was 100, now 50)"), std::string::npos) << output;
  EXPECT_NE(output.find("store.stride (was 100, now 50)"), std::string::npos) << output;
  EXPECT_TRUE(read_bytes(stage_ / "best.pt") == trained) << "the refused run changed the stage";

  // The same store rebuilt from the same data with the same settings is the same store.
  ASSERT_EQ(preprocess("", &output), 0) << output;
  ASSERT_EQ(run_command(normal(), &output), 0) << output;
  EXPECT_NE(output.find("already complete"), std::string::npos) << output;
  EXPECT_EQ(epoch_lines(stage_), 1U);

  // Settings that change the graphs but not the window are a different store too.
  ASSERT_EQ(preprocess("--node-identity can-id", &output), 0) << output;
  EXPECT_NE(run_command(normal(), &output), 0) << output;
  EXPECT_NE(output.find("store.node_identity"), std::string::npos) << output;
  // Starting over there is what --resume false is for.
  ASSERT_EQ(run_command(normal("--resume false"), &output), 0) << output;
  EXPECT_EQ(output.find("already complete"), std::string::npos) << output;
}

// The issue's own reproduction, through `run`, which rebuilds its store every time.
TEST_F(HostileRuns, RunWithAnotherWindowDoesNotReuseItsStages) {
  const auto pipeline = [&](const std::string& extra) {
    return headroom(fmt::format(
        "run '{}' --store '{}' --runs-dir '{}' --max-epochs 1 --batch-size 64 --threads 1 "
        "--vgae-hidden 16,8 --latent 4 --fusion-epochs 2 --progress false {}",
        data_.string(), (dir_ / "run_store").string(), runs_.string(), extra));
  };
  std::string output;
  ASSERT_EQ(run_command(pipeline(""), &output), 0) << output;
  EXPECT_NE(run_command(pipeline("--window 50 --stride 50"), &output), 0) << output;
  EXPECT_EQ(output.find("already complete"), std::string::npos) << output;
  EXPECT_EQ(output.find("(reused)"), std::string::npos) << output;
  EXPECT_NE(output.find("store.window (was 100, now 50)"), std::string::npos) << output;
  // Back to the first window: the store is the first one again, and every stage is reused.
  ASSERT_EQ(run_command(pipeline(""), &output), 0) << output;
  EXPECT_NE(output.find("(reused)"), std::string::npos) << output;
  EXPECT_EQ(epoch_lines(runs_ / "run_store" / "teacher_autoencoder"), 1U);
}

// Issue 25, item 6: two processes in one stage directory interleaved metrics.jsonl and left one's
// config.json beside the other's best.pt. A held lock stops the second at once, naming the pid.
TEST_F(HostileRuns, SecondProcessInAStageDirectoryFailsAtOnceNamingTheHolder) {
  fs::create_directories(stage_);
  std::optional<util::ExclusiveLock> holder;
  holder.emplace(stage_ / "headroom.lock", "test holder", util::WhenLocked::kFail);
  std::string output;
  const int status = run_command(normal(), &output);
  EXPECT_NE(status, 0) << output;
  EXPECT_NE(status, 124) << "it waited for the lock instead of failing:\n" << output;
  EXPECT_NE(output.find("in use by headroom process " + std::to_string(::getpid())),
            std::string::npos)
      << output;
  EXPECT_FALSE(fs::exists(stage_ / "config.json"));
  EXPECT_FALSE(fs::exists(stage_ / "metrics.jsonl"));
  EXPECT_FALSE(fs::exists(stage_ / "log.txt")) << "nothing is written before the lock is held";

  // Released, the same command trains; the lock file left behind blocks nothing.
  holder.reset();
  ASSERT_EQ(run_command(normal(), &output), 0) << output;
  EXPECT_EQ(epoch_lines(stage_), 1U);
}

TEST_F(HostileRuns, WaitForLockWaitsUntilTheHolderReleasesTheStage) {
  fs::create_directories(stage_);
  std::optional<util::ExclusiveLock> holder;
  holder.emplace(stage_ / "headroom.lock", "test holder", util::WhenLocked::kFail);
  const auto log = dir_ / "waiter.log";
  Background waiter(normal("--wait-for-lock"), log);
  ASSERT_TRUE(waiter.wait_for_text("waiting for headroom process " + std::to_string(::getpid())))
      << read_bytes(log);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(waiter.finished()) << read_bytes(log);
  EXPECT_FALSE(fs::exists(stage_ / "metrics.jsonl")) << "it trained under a held lock";
  holder.reset();
  ASSERT_EQ(waiter.join(), 0) << read_bytes(log);
  EXPECT_EQ(epoch_lines(stage_), 1U);
}

// A holder killed without warning leaves its lock file, never its lock: the same command resumes.
TEST_F(HostileRuns, KilledHolderLeavesNoLockBehind) {
  const auto longer = "--max-epochs 20 --patience 20 --batch-size 8";
  // Started directly (no `timeout` in between), so that the kill reaches the holder itself.
  ASSERT_TRUE(
      testing::kill_after_epochs(fmt::format("'{}' {}", HEADROOM_BINARY, normal_args("", longer)),
                                 stage_ / "metrics.jsonl", 1))
      << "the run finished before it could be killed";
  ASSERT_TRUE(fs::exists(stage_ / "headroom.lock"));
  std::string output;
  ASSERT_EQ(run_command(headroom(normal_args("", longer)), &output), 0) << output;
  EXPECT_NE(output.find("resuming"), std::string::npos) << output;
  EXPECT_EQ(epoch_lines(stage_), 20U);
}

// The store being built is locked the same way; the old store stays whole meanwhile, and
// concurrent builds with --wait-for-lock still each leave a complete store.
TEST_F(HostileRuns, StoreBuildIsLockedTheSameWay) {
  const auto lock_file = dir_ / "store.headroom.lock";
  const auto before = tree_snapshot(store_);
  std::optional<util::ExclusiveLock> holder;
  holder.emplace(lock_file, "test holder", util::WhenLocked::kFail);
  std::string output;
  const int status = preprocess("--window 50 --stride 50", &output);
  EXPECT_NE(status, 0) << output;
  EXPECT_NE(status, 124) << "it waited for the lock instead of failing:\n" << output;
  EXPECT_NE(output.find("in use by headroom process " + std::to_string(::getpid())),
            std::string::npos)
      << output;
  EXPECT_TRUE(tree_snapshot(store_) == before) << "the store changed";

  const auto log = dir_ / "waiter.log";
  Background waiter(
      headroom(fmt::format("preprocess '{}' --out '{}' --force --no-progress --window 50 "
                           "--stride 50 --wait-for-lock",
                           data_.string(), store_.string())),
      log);
  ASSERT_TRUE(waiter.wait_for_text("waiting for headroom process " + std::to_string(::getpid())))
      << read_bytes(log);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(waiter.finished()) << read_bytes(log);
  EXPECT_TRUE(tree_snapshot(store_) == before) << "the store changed";
  holder.reset();
  ASSERT_EQ(waiter.join(), 0) << read_bytes(log);
  EXPECT_NE(read_bytes(store_ / "manifest.json").find("\"window\": 50"), std::string::npos);

  // Two builds at once: one waits for the other, both succeed, the store opens.
  int statuses[2] = {-1, -1};
  std::string outputs[2];
  std::thread builds[2];
  for (int i = 0; i < 2; ++i)
    builds[i] = std::thread([&, i] { statuses[i] = preprocess("--wait-for-lock", &outputs[i]); });
  for (auto& build : builds) build.join();
  EXPECT_EQ(statuses[0], 0) << outputs[0];
  EXPECT_EQ(statuses[1], 0) << outputs[1];
  ASSERT_EQ(run_command(headroom(fmt::format("inspect '{}' --verify", store_.string())), &output),
            0)
      << output;
  // No lock outlives its process: a plain build goes ahead.
  ASSERT_EQ(preprocess("", &output), 0) << output;
}

// Issue 25, item 15: --dataset ../../x or an absolute path wrote run directories outside
// --runs-dir.
TEST_F(HostileRuns, DatasetNameCannotLeaveTheRunsDirectory) {
  const auto deep_runs = dir_ / "a" / "b" / "runs";
  const auto outside = dir_ / "outside";
  fs::create_directories(deep_runs);
  const auto before = tree_snapshot(dir_.path());
  for (const std::string& name :
       {std::string("../../x"), std::string(".."), std::string("a/b"), outside.string()}) {
    SCOPED_TRACE(name);
    std::string output;
    EXPECT_NE(run_command(headroom(fmt::format(
                              "normal --store '{}' --runs-dir '{}' --dataset '{}' "
                              "--preset gat,student --max-epochs 1 --threads 1 --progress false",
                              store_.string(), deep_runs.string(), name)),
                          &output),
              0)
        << output;
    EXPECT_NE(output.find("--dataset must name one directory under --runs-dir"), std::string::npos)
        << output;
    EXPECT_TRUE(tree_snapshot(dir_.path()) == before) << "something was written";
    EXPECT_FALSE(fs::exists(outside));
    EXPECT_FALSE(fs::exists(dir_ / "a" / "x"));
  }
  // `run` too, before it builds anything.
  std::string output;
  EXPECT_NE(run_command(headroom(fmt::format("run '{}' --store '{}' --runs-dir '{}' --dataset "
                                             "'../x' --max-epochs 1 --progress false",
                                             data_.string(), (dir_ / "run_store").string(),
                                             deep_runs.string())),
                        &output),
            0);
  EXPECT_NE(output.find("--dataset must name one directory"), std::string::npos) << output;
  EXPECT_FALSE(fs::exists(dir_ / "run_store"));
  EXPECT_TRUE(tree_snapshot(dir_.path()) == before);
}

// Issue 25, item 16: --seed -1 became 18446744073709551615, on the command line and in a config
// file; `window = 1e3` in a config file was read as 1000 where --window 1e3 is refused.
TEST_F(HostileRuns, CommandLineAndConfigFileRefuseTheSameValues) {
  const auto before = tree_snapshot(store_);
  const auto config = dir_ / "config.toml";
  const auto refused = [&](const std::string& command, const std::string& expected) {
    std::string output;
    EXPECT_NE(run_command(command, &output), 0) << command << "\n" << output;
    EXPECT_NE(output.find(expected), std::string::npos) << command << "\n" << output;
  };
  const auto preprocessing = [&](const std::string& extra) {
    return headroom(fmt::format("preprocess '{}' --out '{}' --force --no-progress {}",
                                data_.string(), store_.string(), extra));
  };
  const auto with_config = fmt::format("--config '{}'", config.string());
  refused(preprocessing("--seed -1"), "--seed");
  write_text_file(config, "[preprocess]\nseed = -1\n");
  refused(preprocessing(with_config), ":2: [preprocess] 'seed'");

  refused(preprocessing("--window 1e3"), "--window");
  write_text_file(config, "[preprocess]\nwindow = 1e3\n");
  refused(preprocessing(with_config), ":2: [preprocess] 'window'");
  write_text_file(config, "[preprocess]\nwindow = 100.0\n");
  refused(preprocessing(with_config), ":2: [preprocess] 'window'");
  EXPECT_TRUE(tree_snapshot(store_) == before) << "the store changed";

  refused(normal("--seed -1"), "--seed");
  write_text_file(config, "[normal]\nseed = -1\n");
  refused(normal(with_config), ":2: [normal] 'seed'");
  EXPECT_FALSE(fs::exists(stage_ / "config.json"));

  // What both accept, both accept alike.
  write_text_file(config, "[preprocess]\nwindow = 50\nseed = 0\n");
  std::string output;
  ASSERT_EQ(run_command(preprocessing(with_config), &output), 0) << output;
  EXPECT_NE(read_bytes(store_ / "manifest.json").find("\"window\": 50"), std::string::npos);
}

// RANK, WORLD_SIZE and MASTER_PORT left in a shell made a plain `normal` wait silently for a
// rendezvous with peers that never come. It now says at once what it joins, where, for how long,
// and how to train alone. (Mutation seen to fail: the message printed after connect, as before.)
TEST_F(HostileRuns, StrayLauncherVariablesAreSaidBeforeTheRendezvous) {
  Background waiting("RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" +
                         std::to_string(testing::free_tcp_port()) + " timeout 20 " +
                         normal("--distributed-timeout 15") + " 2>&1",
                     dir_ / "waiting.log");
  EXPECT_TRUE(waiting.wait_for_text("joining a torchrun job as rank 1 of 2"))
      << read_bytes(dir_ / "waiting.log");
  const auto said = read_bytes(dir_ / "waiting.log");
  EXPECT_NE(said.find("RANK and WORLD_SIZE are set"), std::string::npos) << said;
  EXPECT_NE(said.find("--distributed off trains alone"), std::string::npos) << said;
  EXPECT_NE(waiting.join(), 0);  // rank 0 never came
}

// A stage command's run directories or TensorBoard files inside its store or the store's dataset
// made headroom refuse its own store and dataset afterwards (as holding files it did not write),
// and a log.txt among the CAN files broke the next preprocess. Refused before anything is
// written, as `run` refuses them. (Mutation seen to fail: run_stage without
// require_outputs_outside_inputs.)
TEST_F(HostileRuns, StageOutputsInsideTheStoreOrItsDatasetAreRefused) {
  const auto before = tree_snapshot(dir_.path());
  const std::pair<std::string, std::string> cases[] = {
      {"--runs-dir '" + (store_ / "runs").string() + "'", "is inside the store (--store)"},
      {"--runs-dir '" + (data_ / "train_01_attack_free").string() + "'",
       "is inside the dataset the store was built from"},
      {"--tensorboard '" + store_.string() + "'", "the TensorBoard directory (--tensorboard)"},
      {"--tensorboard '" + (data_ / "tb").string() + "'",
       "the TensorBoard directory (--tensorboard)"}};
  for (const auto& [flag, expected] : cases) {
    std::string output;
    EXPECT_NE(
        run_command(headroom(fmt::format("normal --store '{}' --preset gat,student --max-epochs 1 "
                                         "--threads 1 --progress false {}",
                                         store_.string(), flag)),
                    &output),
        0)
        << flag;
    EXPECT_NE(output.find(expected), std::string::npos) << flag << "\n" << output;
  }
  EXPECT_EQ(tree_snapshot(dir_.path()), before);
}

}  // namespace
}  // namespace headroom
