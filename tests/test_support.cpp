#include "test_support.hpp"

#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/synthetic/synthetic_traffic.hpp"

#include <array>
#include <cstdio>
#include <fstream>
#include <random>
#include <stdexcept>

#include <chrono>
#include <thread>

#include <signal.h>
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

bool kill_after_epochs(const std::string& command, const std::filesystem::path& metrics,
                       std::size_t epochs) {
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
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
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

}  // namespace headroom::testing
