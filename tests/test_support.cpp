#include "test_support.hpp"

#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/synthetic/synthetic_traffic.hpp"

#include <array>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <utility>

#include <chrono>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace headroom::testing {

TempDir::TempDir() {
  std::random_device device;
  const auto base = std::filesystem::temp_directory_path();
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto candidate = base / ("headroom-test-" + std::to_string(device()));
    if (std::filesystem::create_directory(candidate)) {
      path_ = candidate;
      return;
    }
  }
  throw std::runtime_error("could not create a temporary directory");
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

void write_text_file(const std::filesystem::path& file, std::string_view content) {
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

std::filesystem::path shared_data_dir() {
  const std::filesystem::path dir = HEADROOM_SHARED_DATA_DIR;
  std::error_code ec;
  if (std::filesystem::is_directory(dir / "can", ec)) return std::filesystem::canonical(dir);
  return {};
}

std::filesystem::path build_synthetic_store(const std::filesystem::path& dir, std::uint64_t frames,
                                            std::uint64_t seed) {
  synthetic::SyntheticDatasetOptions options;
  options.total_frames = frames;
  options.seed = seed;
  synthetic::generate_synthetic_dataset(dir / "data", options, /*overwrite=*/true);
  preprocess::PreprocessOptions preprocess_options;
  preprocess_options.threads = 2;
  preprocess_options.progress = 0;
  preprocess::preprocess_dataset(dir / "data", dir / "store", preprocess_options);
  return dir / "store";
}

std::string read_bytes(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

int run_command(const std::string& command, std::string* output) {
  const std::string full = command + " 2>&1";
  FILE* pipe = popen(full.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  std::array<char, 4096> buffer{};
  std::string collected;
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe))
    collected.append(buffer.data(), n);
  const int status = pclose(pipe);
  if (output != nullptr) *output = std::move(collected);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<nlohmann::json> read_metrics(const std::filesystem::path& file, std::string_view type) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    auto parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_discarded() && parsed.value("type", "") == type)
      lines.push_back(std::move(parsed));
  }
  return lines;
}

// Kept for tests whose point is a kill at an arbitrary moment, from outside the run (a lock holder
// killed without warning, HostileRuns.KilledHolderLeavesNoLockBehind). A test of where a killed
// run resumes uses HEADROOM_INJECT_KILL instead (tests/train/injected_kill.hpp): this polls
// metrics.jsonl and sleeps `settle`, so where the kill lands depends on the machine's speed.
bool kill_after_epochs(const std::string& command, const std::filesystem::path& metrics,
                       std::size_t epochs, std::chrono::milliseconds settle) {
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + command + " > /dev/null 2>&1").c_str(), nullptr);
    _exit(127);
  }
  bool killed = false;
  for (int i = 0; i < 6000; ++i) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return false;
    if (read_metrics(metrics).size() >= epochs) {
      // Let it get partway into the next epoch, then kill without warning.
      std::this_thread::sleep_for(settle);
      kill(pid, SIGKILL);
      killed = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return killed && WIFSIGNALED(status);
}

namespace {

// The kernel's ephemeral port range (/proc/sys/net/ipv4/ip_local_port_range): where bind() to
// port 0 and every outgoing connection take their ports.
std::pair<int, int> ephemeral_port_range() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 32768, high = 60999;
  in >> low >> high;
  return {low, high};
}

// Whether `port` on the loopback can be bound right now (bound, then released).
bool loopback_port_is_free(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("free_tcp_port: socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool free = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return free;
}

}  // namespace

// Ports are drawn at random below the ephemeral range, not from bind(0): a port bind(0) hands out
// is one that any process's next outgoing connection (a test's HTTP client, a c10d rank) may take
// before the server the test starts binds it, and parallel tests make that happen. Below the range
// only another test drawing the same port at the same moment could (1 in ~20,000 per pair).
int free_tcp_port() {
  const int ephemeral_low = ephemeral_port_range().first;
  constexpr int kLowest = 10000;
  if (ephemeral_low - kLowest < 1000)
    throw std::runtime_error("free_tcp_port: the ephemeral port range starts too low");
  std::mt19937 random(std::random_device{}() ^ static_cast<unsigned>(getpid()));
  std::uniform_int_distribution<int> draw(kLowest, ephemeral_low - 1);
  for (int attempt = 0; attempt < 200; ++attempt) {
    const int port = draw(random);
    if (loopback_port_is_free(port)) return port;
  }
  throw std::runtime_error("free_tcp_port: no free loopback port below the ephemeral range");
}

LocalJob::LocalJob(const std::string& command, int world_size, const std::filesystem::path& log_dir,
                   const std::vector<std::string>& rank_env)
    : statuses_(static_cast<std::size_t>(world_size), -1), log_dir_(log_dir) {
  std::filesystem::create_directories(log_dir);
  const int port = free_tcp_port();
  for (int rank = 0; rank < world_size; ++rank) {
    const std::string env =
        "export RANK=" + std::to_string(rank) + " WORLD_SIZE=" + std::to_string(world_size) +
        " LOCAL_RANK=" + std::to_string(rank) + " LOCAL_WORLD_SIZE=" + std::to_string(world_size) +
        " MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port) + " " +
        (static_cast<std::size_t>(rank) < rank_env.size() ? rank_env[rank] : "");
    const auto line = env + "; exec " + command + " > " +
                      (log_dir / ("rank" + std::to_string(rank) + ".log")).string() + " 2>&1";
    const pid_t pid = fork();
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", line.c_str(), nullptr);
      _exit(127);
    }
    pids_.push_back(pid);
  }
}

LocalJob::~LocalJob() {
  for (std::size_t r = 0; r < pids_.size(); ++r)
    if (statuses_[r] == -1) {
      ::kill(pids_[r], SIGKILL);
      int status = 0;
      waitpid(pids_[r], &status, 0);
    }
}

int LocalJob::wait(int rank, std::chrono::seconds timeout) {
  const auto r = static_cast<std::size_t>(rank);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (statuses_[r] == -1) {
    int status = 0;
    if (waitpid(pids_[r], &status, WNOHANG) == pids_[r]) {
      statuses_[r] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return statuses_[r];
}

std::vector<int> LocalJob::wait_all(std::chrono::seconds timeout) {
  std::vector<int> statuses;
  for (std::size_t r = 0; r < pids_.size(); ++r)
    statuses.push_back(wait(static_cast<int>(r), timeout));
  return statuses;
}

void LocalJob::kill(int rank) { ::kill(pids_[static_cast<std::size_t>(rank)], SIGKILL); }

std::string LocalJob::log(int rank) const {
  std::ifstream in(log_dir_ / ("rank" + std::to_string(rank) + ".log"));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string error_message(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "";
}

}  // namespace headroom::testing
