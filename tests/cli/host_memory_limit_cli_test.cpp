// `headroom` under a real host memory limit: a memory cgroup this test creates (as root: cgroup
// v1's memory controller, or v2 with the memory controller enabled at the root) holds only the
// headroom process it starts, with memory.limit_in_bytes / memory.max set below what the run
// would take unconstrained. The run must adapt (finish, its log showing the host plan and the
// adaptation) or fail with the host-memory message; the kernel's OOM killer must never get it.
// Without a writable memory cgroup (not root, no controller) every test here is skipped with the
// reason. Run them alone with `ctest -R RealHostLimit`.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "test_support.hpp"

namespace headroom {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool write_file(const fs::path& file, const std::string& text) {
  std::ofstream out(file);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

// A memory cgroup made for one test and removed after it (once its processes are gone).
class MemoryCgroup {
 public:
  // nullptr, with the reason in *why_not, where no memory cgroup can be made here.
  static std::unique_ptr<MemoryCgroup> create(std::int64_t limit_bytes, std::string* why_not) {
    const auto name = "headroom_test_" + std::to_string(getpid());
    const fs::path v1 = "/sys/fs/cgroup/memory";
    const fs::path v2 = "/sys/fs/cgroup";
    if (fs::exists(v1 / "memory.limit_in_bytes")) {
      auto cgroup = make(v1 / name, "memory.limit_in_bytes", "cgroup v1", limit_bytes, why_not);
      if (cgroup) return cgroup;
    }
    if (fs::exists(v2 / "cgroup.controllers") &&
        read_file(v2 / "cgroup.controllers").find("memory") != std::string::npos) {
      write_file(v2 / "cgroup.subtree_control", "+memory");  // may already be on
      return make(v2 / name, "memory.max", "cgroup v2", limit_bytes, why_not);
    }
    if (why_not->empty())
      *why_not = "no cgroup memory controller at /sys/fs/cgroup/memory (v1) or /sys/fs/cgroup (v2)";
    return nullptr;
  }
  ~MemoryCgroup() {
    // The kernel releases an emptied cgroup shortly after its last process is reaped.
    for (int attempt = 0; attempt < 50 && fs::exists(dir_); ++attempt) {
      if (rmdir(dir_.c_str()) == 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;

  const fs::path& dir() const { return dir_; }
  const std::string& mechanism() const { return mechanism_; }
  // The source name headroom gives this limit (memory/host_memory_limit.hpp).
  std::string source_name() const {
    return mechanism_ + " " + limit_file_ + " (" + (dir_ / limit_file_).string() + ")";
  }

 private:
  static std::unique_ptr<MemoryCgroup> make(const fs::path& dir, const std::string& limit_file,
                                            const std::string& mechanism, std::int64_t limit_bytes,
                                            std::string* why_not) {
    std::error_code ec;
    if (!fs::create_directory(dir, ec) && !fs::exists(dir)) {
      *why_not = "cannot create " + dir.string() + ": " + ec.message() + " (needs root)";
      return nullptr;
    }
    auto cgroup = std::unique_ptr<MemoryCgroup>(new MemoryCgroup(dir, limit_file, mechanism));
    if (!write_file(dir / limit_file, std::to_string(limit_bytes))) {
      *why_not = "cannot write " + (dir / limit_file).string();
      return nullptr;
    }
    return cgroup;
  }
  MemoryCgroup(fs::path dir, std::string limit_file, std::string mechanism)
      : dir_(std::move(dir)),
        limit_file_(std::move(limit_file)),
        mechanism_(std::move(mechanism)) {}

  fs::path dir_;
  std::string limit_file_;
  std::string mechanism_;
};

// The OOM kills the kernel counted in the cgroup ("oom_kill N" in v1's memory.oom_control, v2's
// memory.events).
int oom_kills(const MemoryCgroup& cgroup) {
  for (const auto* file : {"memory.oom_control", "memory.events"}) {
    std::istringstream lines(read_file(cgroup.dir() / file));
    std::string key;
    long long value = 0;
    while (lines >> key >> value)
      if (key == "oom_kill") return static_cast<int>(value);
  }
  return -1;
}

// The cgroup's peak charge (v1 memory.max_usage_in_bytes, v2 memory.peak), page cache included.
std::int64_t peak_usage(const MemoryCgroup& cgroup) {
  for (const auto* file : {"memory.max_usage_in_bytes", "memory.peak"}) {
    const auto text = read_file(cgroup.dir() / file);
    if (!text.empty()) return std::stoll(text);
  }
  return -1;
}

struct ChildResult {
  bool signaled = false;
  int signal = 0;
  int exit_code = -1;
  std::int64_t peak_rss_bytes = 0;  // getrusage's maxrss of the child
  std::string output;               // its stdout and stderr
};

// Runs `command` through /bin/sh (exec'd, so the shell's process is the command's), inside
// `cgroup` when given: the child joins it before it execs, so only it is limited.
ChildResult run_child(const std::string& command, const MemoryCgroup* cgroup, const fs::path& log) {
  const std::string shell = "exec " + command + " > '" + log.string() + "' 2>&1";
  const std::string procs = cgroup ? (cgroup->dir() / "cgroup.procs").string() : std::string();
  const pid_t pid = fork();
  if (pid == 0) {
    if (!procs.empty()) {
      const int fd = open(procs.c_str(), O_WRONLY);
      if (fd < 0 || write(fd, "0", 1) != 1) _exit(97);  // "0": the writing process
      close(fd);
    }
    execl("/bin/sh", "sh", "-c", shell.c_str(), static_cast<char*>(nullptr));
    _exit(98);
  }
  ChildResult result;
  int status = 0;
  rusage usage{};
  if (pid < 0 || wait4(pid, &status, 0, &usage) != pid) return result;
  result.signaled = WIFSIGNALED(status);
  result.signal = result.signaled ? WTERMSIG(status) : 0;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.peak_rss_bytes = static_cast<std::int64_t>(usage.ru_maxrss) * 1024;
  result.output = read_file(log);
  return result;
}

class RealHostLimit : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    skip_reason_ = probe_skip_reason();
    if (!skip_reason_.empty()) return;  // nothing to build for tests that will skip
    store_ = testing::build_synthetic_store(dir_->path(), 400000);
    // The run unconstrained: every training graph (about 1900) in one batch, budgets at their
    // defaults; unpacked, so the OOM guard is what has to split the batch under the limit.
    const auto free = run_child(command("free"), nullptr, dir_->path() / "free.log");
    ASSERT_EQ(free.exit_code, 0) << free.output;
    unconstrained_peak_ = free.peak_rss_bytes;
  }
  static void TearDownTestSuite() { delete dir_; }

  static std::string command(const std::string& runs, const std::string& extra = "") {
    return std::string(HEADROOM_BINARY) + " normal --preset gat,teacher --max-epochs 1 " +
           "--batch-size 1000000 --pack-batches false --progress false --store " + store_.string() +
           " --runs-dir " + (dir_->path() / runs).string() + " " + extra;
  }
  // A cgroup whose limit is 45% of the unconstrained peak RSS: far below what the run takes
  // unconstrained, above the process's baseline (LibTorch loaded, the store open).
  std::unique_ptr<MemoryCgroup> limited() {
    std::string why_not;
    auto cgroup = MemoryCgroup::create(limit(), &why_not);
    if (!cgroup) return nullptr;
    std::cout << "[ limit    ] " << cgroup->source_name() << " = " << limit() << " bytes ("
              << unconstrained_peak_ << " bytes peak RSS unconstrained)\n";
    return cgroup;
  }
  static std::int64_t limit() { return unconstrained_peak_ * 45 / 100; }
  static std::string probe_skip_reason() {
    std::string why_not;
    const auto probe = MemoryCgroup::create(1 << 30, &why_not);
    return probe ? std::string() : why_not;
  }

  static inline testing::TempDir* dir_ = nullptr;
  static inline fs::path store_;
  static inline std::int64_t unconstrained_peak_ = 0;
  static inline std::string skip_reason_;
};

// What gives the assertions meaning: inside such a cgroup, a process that outgrows the limit is
// killed by the kernel (tail buffering one endless line; the shell reports 128 + SIGKILL).
TEST_F(RealHostLimit, TheCgroupKillsAProcessThatOutgrowsIt) {
  if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
  auto cgroup = limited();
  ASSERT_NE(cgroup, nullptr);
  const auto bytes = std::to_string(2 * limit());
  const auto result = run_child("sh -c 'head -c " + bytes + " /dev/zero | tail -n 1 | wc -c'",
                                cgroup.get(), dir_->path() / "control.log");
  EXPECT_FALSE(result.signaled);
  EXPECT_EQ(result.exit_code, 0) << result.output;  // the pipeline's last command, wc
  EXPECT_GT(oom_kills(*cgroup), 0) << "tail was not OOM-killed: is the limit real?";
  // tail died before it printed its line: wc counted 0 bytes. (The shell also reports "Killed",
  // before or after wc's line.)
  EXPECT_TRUE(("\n" + result.output).find("\n0\n") != std::string::npos) << result.output;
}

TEST_F(RealHostLimit, DefaultBudgetsAdaptAndTheRunFinishes) {
  if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
  auto cgroup = limited();
  ASSERT_NE(cgroup, nullptr);
  const auto result = run_child(command("adapt"), cgroup.get(), dir_->path() / "adapt.log");
  ASSERT_FALSE(result.signaled) << "killed by signal " << result.signal << "\n" << result.output;
  if (result.exit_code != 0) {
    // Allowed: not fitting at all, said clearly.
    EXPECT_NE(result.output.find("host memory: the run needs"), std::string::npos) << result.output;
    return;
  }
  EXPECT_NE(result.output.find("host memory: budget"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("95% of the " + cgroup->source_name() + " limit"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("adapted: CPU tensor budget"), std::string::npos) << result.output;
  EXPECT_EQ(oom_kills(*cgroup), 0);
  std::cout << "[ adapted  ] peak cgroup usage " << peak_usage(*cgroup) << " bytes of " << limit()
            << ", no OOM kill\n";
}

TEST_F(RealHostLimit, ATensorBudgetOverTheLimitFailsWithTheHostPlan) {
  if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
  auto cgroup = limited();
  ASSERT_NE(cgroup, nullptr);
  const auto result = run_child(command("over", "--memory-budget " + std::to_string(limit())),
                                cgroup.get(), dir_->path() / "over.log");
  ASSERT_FALSE(result.signaled) << "killed by signal " << result.signal << "\n" << result.output;
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("host memory: the run needs"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("CPU tensors"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find(cgroup->source_name()), std::string::npos) << result.output;
}

TEST_F(RealHostLimit, AHostBudgetOverTheLimitIsRefusedNamingTheCgroup) {
  if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
  auto cgroup = limited();
  ASSERT_NE(cgroup, nullptr);
  const auto result =
      run_child(command("refused", "--host-memory-budget " + std::to_string(2 * limit())),
                cgroup.get(), dir_->path() / "refused.log");
  ASSERT_FALSE(result.signaled) << result.output;
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("exceeds the host memory limit"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find(cgroup->source_name()), std::string::npos) << result.output;
}

// `headroom plan` shows the host section with the limit's source, every limit found and every
// source ignored; SLURM's variables stand in for a job's grant (no cgroup needed).
class HostPlanCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    store_ = testing::build_synthetic_store(dir_->path(), 20000);
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string plan(const std::string& environment, const std::string& extra = "") {
    return environment + " " + std::string(HEADROOM_BINARY) +
           " plan --mode static --preset gat,student --store " + store_.string() + " " + extra;
  }
  static inline testing::TempDir* dir_ = nullptr;
  static inline fs::path store_;
};

TEST_F(HostPlanCli, ShowsTheHostSectionFromSlurmsGrant) {
  std::string output;
  ASSERT_EQ(
      testing::run_command(
          plan("SLURM_MEM_PER_NODE=4096 SLURM_MEM_PER_CPU=lots SLURM_CPUS_ON_NODE=2"), &output),
      0)
      << output;
  // 95% of 4096 MiB.
  EXPECT_NE(output.find("host memory: budget 3.80 GiB (95% of the SLURM_MEM_PER_NODE limit)"),
            std::string::npos)
      << output;
  for (const auto* expected :
       {"  baseline ", "  CPU tensors ", "  prefetch queue (4 + 1 batches)", "  store arrays ",
        "SLURM_MEM_PER_NODE 4.00 GiB", "ignored: SLURM_MEM_PER_CPU: 'lots' is not a whole number",
        "adapted: CPU tensor budget"})
    EXPECT_NE(output.find(expected), std::string::npos) << expected << "\n" << output;
}

TEST_F(HostPlanCli, AHostBudgetAboveSlurmsGrantIsRefused) {
  std::string output;
  EXPECT_EQ(
      testing::run_command(plan("SLURM_MEM_PER_NODE=1024", "--host-memory-budget 2GiB"), &output),
      1)
      << output;
  EXPECT_NE(output.find("--host-memory-budget 2.00 GiB exceeds the host memory limit 1.00 GiB set "
                        "by SLURM_MEM_PER_NODE"),
            std::string::npos)
      << output;
}

}  // namespace
}  // namespace headroom
