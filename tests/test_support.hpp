// Helpers shared by the tests: temporary directories, fixture files and the shared real data.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace headroom::testing {

// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Writes `content` to `file`, creating parent directories.
void write_text_file(const std::filesystem::path& file, std::string_view content);

// ../shared/data next to the repository, or an empty path when it is absent.
std::filesystem::path shared_data_dir();

// Generates a synthetic dataset of `frames` frames under dir/data and preprocesses it into
// dir/store (2 threads, no progress bar); returns the store path.
std::filesystem::path build_synthetic_store(const std::filesystem::path& dir,
                                            std::uint64_t frames = 40000, std::uint64_t seed = 7);

// Runs a shell command, returns its exit status; stdout+stderr go to *output when given.
int run_command(const std::string& command, std::string* output = nullptr);

// The bytes of `file`, unchanged; "" when it cannot be opened.
std::string read_bytes(const std::filesystem::path& file);

// The lines of a run's metrics.jsonl of one type: "epoch" (one per finished epoch) or "step"
// (sampled memory lines). Lines torn by a kill are skipped.
std::vector<nlohmann::json> read_metrics(const std::filesystem::path& file,
                                         std::string_view type = "epoch");

// Starts `command` in a child process and SIGKILLs it once `metrics` holds `epochs` epoch lines
// (`settle` after, partway into the next epoch; 0 for runs whose epochs take milliseconds, which
// could otherwise finish in the meantime). Returns true when the kill happened before the child
// finished on its own.
bool kill_after_epochs(const std::string& command, const std::filesystem::path& metrics,
                       std::size_t epochs,
                       std::chrono::milliseconds settle = std::chrono::milliseconds(100));

// A free TCP port on the loopback interface (bound and released: another process may take it
// before the caller does, which a test then sees as a failed rendezvous).
int free_tcp_port();

// A data-parallel job of `world_size` processes on this machine, started the way torchrun starts
// them: each runs `command` (through /bin/sh) with RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR (127.0.0.1) and MASTER_PORT (a free port) set, plus
// `rank_env[rank]` when given ("NAME=value ...", exported before `command` is expanded, so the
// command may refer to them), its output in log_dir/rank<R>.log.
// The destructor kills and reaps the ranks still running.
class LocalJob {
 public:
  LocalJob(const std::string& command, int world_size, const std::filesystem::path& log_dir,
           const std::vector<std::string>& rank_env = {});
  ~LocalJob();
  LocalJob(const LocalJob&) = delete;
  LocalJob& operator=(const LocalJob&) = delete;

  // Waits up to `timeout` for `rank` to end: its exit status (128 + signal when killed by one),
  // or -1 when it still runs.
  int wait(int rank, std::chrono::seconds timeout);
  // Waits for every rank (up to `timeout` each) and returns their exit statuses.
  std::vector<int> wait_all(std::chrono::seconds timeout);
  void kill(int rank);  // SIGKILL, without warning
  std::string log(int rank) const;

 private:
  std::vector<int> pids_;
  std::vector<int> statuses_;
  std::filesystem::path log_dir_;
};

// The message of the exception `call` throws; "" when it throws none.
std::string error_message(const std::function<void()>& call);

}  // namespace headroom::testing

// Skips the current test with a message when ../shared/data is absent (a fresh clone).
#define HEADROOM_REQUIRE_SHARED_DATA()                                    \
  do {                                                                    \
    if (::headroom::testing::shared_data_dir().empty())                   \
      GTEST_SKIP() << "../shared/data is absent: real-data test skipped"; \
  } while (0)
