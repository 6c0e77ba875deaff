// Preprocessing throughput (rows/s) and peak RSS: the synthetic dataset at 1x, 4x and 16x a base
// size, and the real data in ../shared/data (Parquet and CSV). Each run happens in a forked child
// so that its peak RSS is its own (getrusage of the child), not the benchmark process's.
//
// Usage: build/bin/preprocess_bench [--benchmark_filter=...]   (see docs/benchmarks.md)
// HEADROOM_BENCH_DIR (default build/bench-data) caches the generated datasets.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/synthetic/synthetic_traffic.hpp"

namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kBaseFrames = 400'000;

fs::path bench_dir() {
  const char* dir = std::getenv("HEADROOM_BENCH_DIR");
  return dir != nullptr ? fs::path(dir) : fs::path("build/bench-data");
}

fs::path shared_data() {
  const char* dir = std::getenv("HEADROOM_SHARED_DATA");
  return dir != nullptr ? fs::path(dir) : fs::path("../shared/data");
}

fs::path synthetic_dataset(std::uint64_t multiple) {
  const auto root = bench_dir() / fmt::format("synthetic-{}x", multiple);
  if (!fs::exists(root)) {
    headroom::synthetic::SyntheticDatasetOptions options;
    options.total_frames = kBaseFrames * multiple;
    headroom::synthetic::generate_synthetic_dataset(root, options, true);
  }
  return root;
}

// The two CSV files of can-csv/ sit in a train and a test directory of their own datasets; link
// them into one dataset with both kinds of split.
fs::path csv_dataset() {
  const auto root = bench_dir() / "can-csv";
  if (!fs::exists(root)) {
    const auto csv = fs::absolute(shared_data() / "can-csv");
    fs::create_directories(root / "train_02_with_attacks");
    fs::create_directories(root / "test_02_unknown_vehicle_known_attack");
    fs::create_symlink(csv / "set_01/train_02_with_attacks/DoS-1.csv",
                       root / "train_02_with_attacks/DoS-1.csv");
    fs::create_symlink(csv / "hcrl_sa/test_02_unknown_vehicle_known_attack/fuzzing-Spark.csv",
                       root / "test_02_unknown_vehicle_known_attack/fuzzing-Spark.csv");
  }
  return root;
}

struct ChildResult {
  double seconds = 0;
  std::uint64_t rows = 0;
  std::uint64_t graphs = 0;
  long max_rss_kib = 0;
};

// Runs one preprocess in a child process; the child reports rows and graphs through a pipe.
ChildResult preprocess_in_child(const fs::path& dataset, unsigned threads) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const auto store = bench_dir() / "store";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    headroom::preprocess::PreprocessOptions options;
    options.threads = threads;
    options.overwrite = true;
    options.progress = 0;
    std::uint64_t out[2] = {0, 0};
    try {
      const auto report = headroom::preprocess::preprocess_dataset(dataset, store, options);
      out[0] = report.rows;
      out[1] = report.graphs;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "preprocess failed: %s\n", e.what());
      _exit(1);
    }
    if (write(fds[1], out, sizeof out) != sizeof out) _exit(2);
    _exit(0);
  }
  close(fds[1]);
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::uint64_t out[2] = {0, 0};
  const bool ok = read(fds[0], out, sizeof out) == sizeof out;
  close(fds[0]);
  if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("child failed");
  return {seconds, out[0], out[1], usage.ru_maxrss};
}

void run_case(benchmark::State& state, const fs::path& dataset, unsigned threads) {
  ChildResult last;
  double seconds = 0;
  std::uint64_t rows = 0;
  for (auto _ : state) {
    last = preprocess_in_child(dataset, threads);
    state.SetIterationTime(last.seconds);
    seconds += last.seconds;
    rows += last.rows;
  }
  state.counters["rows"] = static_cast<double>(last.rows);
  state.counters["graphs"] = static_cast<double>(last.graphs);
  state.counters["rows_per_s"] = static_cast<double>(rows) / seconds;
  state.counters["peak_rss_MiB"] = static_cast<double>(last.max_rss_kib) / 1024.0;
}

void BM_PreprocessSynthetic(benchmark::State& state) {
  const auto multiple = static_cast<std::uint64_t>(state.range(0));
  run_case(state, synthetic_dataset(multiple), static_cast<unsigned>(state.range(1)));
}
BENCHMARK(BM_PreprocessSynthetic)
    ->ArgsProduct({{1, 4, 16}, {1, 2}})
    ->ArgNames({"x", "threads"})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

void BM_PreprocessSharedParquet(benchmark::State& state) {
  const auto dataset = shared_data() / "can" / (state.range(0) == 0 ? "hcrl_sa" : "set_01");
  if (!fs::exists(dataset)) {
    state.SkipWithError("../shared/data is absent");
    return;
  }
  run_case(state, dataset, static_cast<unsigned>(state.range(1)));
}
BENCHMARK(BM_PreprocessSharedParquet)
    ->ArgsProduct({{0, 1}, {1, 2}})
    ->ArgNames({"set01", "threads"})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

void BM_PreprocessSharedCsv(benchmark::State& state) {
  if (!fs::exists(shared_data() / "can-csv")) {
    state.SkipWithError("../shared/data is absent");
    return;
  }
  run_case(state, csv_dataset(), static_cast<unsigned>(state.range(0)));
}
BENCHMARK(BM_PreprocessSharedCsv)
    ->Arg(1)
    ->Arg(2)
    ->ArgName("threads")
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

// One large file alone: with more threads than files, helper threads build its windows while
// it is read (the chunk-level parallelism).
void BM_PreprocessSingleFile(benchmark::State& state) {
  const auto root = bench_dir() / "single-file";
  if (!fs::exists(root)) {
    fs::create_directories(root / "train_01_attack_free");
    fs::create_symlink(
        fs::absolute(synthetic_dataset(16) / "train_01_attack_free/attack-free-1.csv"),
        root / "train_01_attack_free/attack-free-1.csv");
  }
  run_case(state, root, static_cast<unsigned>(state.range(0)));
}
BENCHMARK(BM_PreprocessSingleFile)
    ->Arg(1)
    ->Arg(2)
    ->ArgName("threads")
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

// The peak RSS of a child that does nothing: the process baseline (loaded libraries) to subtract.
void BM_ChildBaseline(benchmark::State& state) {
  long max_rss_kib = 0;
  for (auto _ : state) {
    const pid_t pid = fork();
    if (pid == 0) _exit(0);
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    max_rss_kib = usage.ru_maxrss;
    state.SetIterationTime(1e-3);
  }
  state.counters["peak_rss_MiB"] = static_cast<double>(max_rss_kib) / 1024.0;
}
BENCHMARK(BM_ChildBaseline)->UseManualTime()->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
