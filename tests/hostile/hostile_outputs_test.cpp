// Hostile output paths, end to end on the binaries: every writing command pointed, with --force
// where it has one, at a home-like tree (an ssh key, a thesis, a web app's manifest.json, an empty
// manifest.json, someone else's synthetic.json, names that only look like headroom's
// temporaries) or at the files its own run reads. Every foreign file survives byte for byte, and
// a write that fails on a full disk leaves no temporary behind.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "test_support.hpp"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::run_command;
using testing::TempDir;
using testing::write_text_file;

std::string headroom(const std::string& args) {
  return fmt::format("'{}' {} 2>&1", HEADROOM_BINARY, args);
}

// Every entry under `root` with its bytes (files), its target (links) or nothing (directories):
// equal snapshots mean nothing was removed, added or changed.
using Snapshot = std::map<std::string, std::string>;
Snapshot snapshot(const fs::path& root) {
  Snapshot entries;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const auto name = fs::relative(entry.path(), root).string();
    if (entry.is_symlink())
      entries[name] = "-> " + fs::read_symlink(entry.path()).string();
    else if (entry.is_regular_file())
      entries[name] = read_bytes(entry.path());
    else
      entries[name] = "<dir>";
  }
  return entries;
}

// A home directory's worth of someone's files.
void plant_home(const fs::path& home) {
  const char key[] = "-----BEGIN KEY-----\n\x01\xff\0z";  // binary bytes, a NUL among them
  write_text_file(home / ".ssh" / "id_rsa", std::string(key, sizeof key - 1));
  write_text_file(home / ".ssh" / "known_hosts", "github.com ssh-ed25519 AAAA\n");
  write_text_file(home / "thesis" / "ch1.tex", "\\chapter{Years of work}");
  write_text_file(home / "notes.txt", "keep me");
}

class HostileOutputs : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = dir_ / "data";
    std::string output;
    ASSERT_EQ(run_command(headroom(fmt::format("generate --out '{}' --frames 3000 --seed 2",
                                               data_.string())),
                          &output),
              0)
        << output;
    data_before_ = snapshot(data_);
  }
  void TearDown() override { EXPECT_EQ(snapshot(data_), data_before_) << "the dataset changed"; }

  int preprocess(const fs::path& out, const std::string& flags, std::string* output) {
    return run_command(headroom(fmt::format("preprocess '{}' --out '{}' --no-progress {}",
                                            data_.string(), out.string(), flags)),
                       output);
  }

  TempDir dir_;
  fs::path data_;
  Snapshot data_before_;
};

TEST_F(HostileOutputs, PreprocessForceKeepsAHomeWithAnEmptyManifest) {
  const auto home = dir_ / "h";
  plant_home(home);
  write_text_file(home / "manifest.json", "");
  const auto before = snapshot(dir_.path());
  std::string output;
  EXPECT_EQ(preprocess(home, "--force", &output), 1) << output;
  EXPECT_NE(output.find("is not a graph store that headroom wrote"), std::string::npos) << output;
  EXPECT_EQ(snapshot(dir_.path()), before);
}

TEST_F(HostileOutputs, PreprocessForceKeepsAWebApp) {
  const auto app = dir_ / "app";
  write_text_file(app / "manifest.json", R"({"name": "my app", "start_url": "/"})");
  write_text_file(app / "index.html", "<html>app</html>");
  write_text_file(app / "node_modules" / "x" / "index.js", "module.exports = 1;");
  const auto before = snapshot(dir_.path());
  std::string output;
  EXPECT_EQ(preprocess(app, "--force", &output), 1) << output;
  EXPECT_NE(output.find("not a headroom graph store manifest"), std::string::npos) << output;
  EXPECT_EQ(snapshot(dir_.path()), before);
}

TEST_F(HostileOutputs, PreprocessForceKeepsFilesSomeoneAddedToAStore) {
  const auto store = dir_ / "store";
  std::string output;
  ASSERT_EQ(preprocess(store, "", &output), 0) << output;
  plant_home(store);
  const auto before = snapshot(dir_.path());
  EXPECT_EQ(preprocess(store, "--force", &output), 1) << output;
  EXPECT_NE(output.find("that headroom did not write"), std::string::npos) << output;
  EXPECT_EQ(snapshot(dir_.path()), before);
}

TEST_F(HostileOutputs, RunsStoreRebuildKeepsAHomeNamedAsItsStore) {
  // `headroom run` rebuilds its store without --force: it must still be a store to be replaced.
  const auto home = dir_ / "h";
  plant_home(home);
  write_text_file(home / "manifest.json", R"({"name": "web"})");
  const auto before = snapshot(dir_.path());
  std::string output;
  EXPECT_NE(
      run_command(headroom(fmt::format("run '{}' --store '{}' --runs-dir '{}' "
                                       "--max-epochs 1 --progress false",
                                       data_.string(), home.string(), (dir_ / "runs").string())),
                  &output),
      0);
  // Refused before anything is built, naming the manifest that is not a store's.
  EXPECT_NE(output.find("manifest.json: not a headroom graph store manifest"), std::string::npos)
      << output;
  EXPECT_NE(output.find("remove it yourself, or choose another --store"), std::string::npos)
      << output;
  auto after = snapshot(dir_.path());
  EXPECT_EQ(after, before);
}

TEST_F(HostileOutputs, RunRefusesSomeonesPageWhereItsReportGoesBeforeItTrains) {
  const auto page = dir_ / "runs" / "store" / "report.html";
  write_text_file(page, "<!DOCTYPE html><title>my notes</title>");
  std::string output;
  EXPECT_NE(run_command(headroom(fmt::format("run '{}' --store '{}' --runs-dir '{}' "
                                             "--max-epochs 1 --progress false",
                                             data_.string(), (dir_ / "store").string(),
                                             (dir_ / "runs").string())),
                        &output),
            0);
  EXPECT_NE(output.find("is not a report headroom wrote"), std::string::npos) << output;
  EXPECT_EQ(read_bytes(page), "<!DOCTYPE html><title>my notes</title>");
  EXPECT_FALSE(fs::exists(dir_ / "store")) << "refused before anything was built";
}

TEST_F(HostileOutputs, GenerateForceKeepsSomeoneElsesSyntheticDataset) {
  const auto theirs = dir_ / "sim";
  write_text_file(theirs / "synthetic.json", R"({"generator": "my-simulator", "files": []})");
  write_text_file(theirs / "recordings" / "drive-1.csv", "timestamp,id\n1,2\n");
  plant_home(theirs);
  // A dataset headroom generated, that someone then added their files to.
  const auto edited = dir_ / "edited";
  std::string output;
  ASSERT_EQ(run_command(headroom(fmt::format("generate --out '{}' --frames 2000", edited.string())),
                        &output),
            0)
      << output;
  write_text_file(edited / "train_01_attack_free" / "my-drive.csv", "timestamp\n1\n");
  const auto before = snapshot(dir_.path());
  for (const auto& target : {theirs, edited}) {
    EXPECT_EQ(run_command(headroom(fmt::format("generate --out '{}' --frames 2000 --force",
                                               target.string())),
                          &output),
              1)
        << output;
    EXPECT_NE(output.find("is not a synthetic dataset that headroom wrote"), std::string::npos)
        << output;
  }
  EXPECT_EQ(snapshot(dir_.path()), before);
}

TEST_F(HostileOutputs, RunRegenerateKeepsSomeoneElsesSyntheticDirectory) {
  const auto theirs = dir_ / "sim";
  write_text_file(theirs / "synthetic.json", "");
  plant_home(theirs);
  const auto before = snapshot(dir_.path());
  std::string output;
  EXPECT_NE(run_command(headroom(fmt::format("run --synthetic-dir '{}' --regenerate --frames 2000 "
                                             "--store '{}' --runs-dir '{}' --max-epochs 1 "
                                             "--progress false",
                                             theirs.string(), (dir_ / "store").string(),
                                             (dir_ / "runs").string())),
                        &output),
            0);
  EXPECT_NE(output.find("is not a synthetic dataset that headroom wrote"), std::string::npos)
      << output;
  EXPECT_EQ(snapshot(dir_.path()), before);
}

TEST_F(HostileOutputs, NamesThatOnlyLookLikeTemporariesSurviveEveryWriter) {
  // `NAME.tmp-NUMBER` trees of a dead "pid", and a tree of headroom's own name form whose pid is
  // gone but which holds no staging marker: none is provably headroom's.
  const auto home = dir_ / "home";
  write_text_file(home / "results.tmp-2023" / "thesis" / "ch1.tex", "\\chapter{One}");
  write_text_file(home / "results.tmp-999999999" / "notes.txt", "mine");
  write_text_file(home / "results.tmp-headroom-999999999-0123456789abcdef" / "tree" / "x.csv", "1");
  write_text_file(home / "sim.tmp-31337" / "data.csv", "1,2");
  write_text_file(home / "report.html.tmp-4242", "draft");
  const auto before = snapshot(home);
  std::string output;
  ASSERT_EQ(preprocess(home / "results", "", &output), 0) << output;
  ASSERT_EQ(preprocess(home / "results", "--force", &output), 0) << output;
  ASSERT_EQ(run_command(
                headroom(fmt::format("generate --out '{}' --frames 2000", (home / "sim").string())),
                &output),
            0)
      << output;
  auto after = snapshot(home);
  for (auto it = after.begin(); it != after.end();)
    it = it->first.starts_with("results/") || it->first == "results" ||
                 it->first.starts_with("sim/") || it->first == "sim"
             ? after.erase(it)
             : std::next(it);
  EXPECT_EQ(after, before);
}

class HostileReport : public ::testing::Test {
 protected:
  // A run root as training leaves it: a stage with its files and checkpoints, an evaluation.
  void SetUp() override {
    runs_ = dir_ / "runs" / "x";
    stage_ = runs_ / "teacher";
    write_text_file(stage_ / "metrics.jsonl",
                    R"({"type":"epoch","epoch":0,"steps":2,"train_loss":0.5})"
                    "\n");
    write_text_file(stage_ / "config.json", R"({"config": {"max_epochs": 1}})");
    write_text_file(stage_ / "result.json", R"({"training": {"best_epoch": 0}})");
    const char checkpoint[] = "PK\x03\x04\0\0weights";
    write_text_file(stage_ / "best.pt", std::string(checkpoint, sizeof checkpoint - 1));
    write_text_file(runs_ / "evaluation" / "evaluation.json", "{}");
    plant_home(dir_ / "home");
    write_text_file(dir_ / "home" / "site.html", "<!DOCTYPE html><title>my site</title>");
    std::string output;
    const int status = report(fmt::format("--out '{}'", (dir_ / "probe.html").string()), &output);
    ASSERT_EQ(status, 0) << output;
    fs::remove(dir_ / "probe.html");
  }

  int report(const std::string& flags, std::string* output) {
    return run_command(headroom(fmt::format("report '{}' {}", runs_.string(), flags)), output);
  }

  TempDir dir_;
  fs::path runs_;
  fs::path stage_;
};

TEST_F(HostileReport, NeverOverwritesAnInputOrAFileItDidNotWrite) {
  fs::create_symlink(stage_ / "metrics.jsonl", dir_ / "link.html");
  const auto before = snapshot(dir_.path());
  std::string output;
  const std::pair<fs::path, const char*> cases[] = {
      {stage_ / "metrics.jsonl", "is one of the report's inputs"},
      {runs_ / "evaluation" / "evaluation.json", "is one of the report's inputs"},
      {stage_ / "memory_plan.json", "is one of the report's inputs"},  // absent, but read if there
      {dir_ / "link.html", "is one of the report's inputs"},
      {stage_ / "best.pt", "is not a report headroom wrote"},
      {dir_ / "home" / "thesis" / "ch1.tex", "is not a report headroom wrote"},
      {dir_ / "home" / "site.html", "is not a report headroom wrote"},
      {dir_ / "home" / ".ssh", "is not a report headroom wrote"},
  };
  for (const auto& [out, expected] : cases) {
    for (const char* force : {"", "--force"}) {
      EXPECT_EQ(report(fmt::format("--out '{}' {}", out.string(), force), &output), 1)
          << out << force << ": " << output;
      EXPECT_NE(output.find(expected), std::string::npos) << output;
    }
  }
  EXPECT_EQ(snapshot(dir_.path()), before);
}

TEST_F(HostileReport, ReplacesItsOwnReportOnlyWithForce) {
  std::string output;
  ASSERT_EQ(report("", &output), 0) << output;
  const auto page = runs_ / "report.html";
  const auto first = read_bytes(page);
  EXPECT_NE(first.find("<meta name=\"generator\" content=\"headroom report\">"), std::string::npos);
  EXPECT_EQ(report("", &output), 1);
  EXPECT_NE(output.find("exists (use --force to replace it)"), std::string::npos) << output;
  EXPECT_EQ(read_bytes(page), first);
  EXPECT_EQ(report("--force", &output), 0) << output;
  // And a later evaluation still merges: the run's files are untouched.
  EXPECT_EQ(read_bytes(runs_ / "evaluation" / "evaluation.json"), "{}");
}

// A full disk, as a file-size limit makes one (writes fail with EFBIG; SIGXFSZ is ignored so
// that the binary sees the error): the failed write's temporary is gone.
std::string with_full_disk(const std::string& command) {
  return fmt::format("sh -c \"trap '' XFSZ; ulimit -f 8; exec {}\"", command);
}

TEST_F(HostileReport, AFailedWriteOnAFullDiskLeavesNoTemporary) {
  fs::create_directories(dir_ / "out");
  std::string output;
  EXPECT_EQ(
      run_command(with_full_disk(fmt::format("'{}' report '{}' --out '{}'", HEADROOM_BINARY,
                                             runs_.string(), (dir_ / "out" / "r.html").string())),
                  &output),
      1)
      << output;
  EXPECT_TRUE(fs::is_empty(dir_ / "out")) << snapshot(dir_ / "out").begin()->first;
}

}  // namespace
}  // namespace headroom
