// CudaPlugin.ACpuRunMapsNoCudaLibrary: runs the main job (`headroom run`, synthetic default,
// small) in this process, linked as headroom-train is, then reads /proc/self/maps: no LibTorch
// CUDA library, CUDA math library, driver or NCCL may be mapped (nn/cuda_runtime.hpp: CUDA is a plugin
// loaded only for a CUDA device). A plain program rather than a gtest case: the test binary links
// LibTorch's CUDA library itself.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "headroom/train_cli/training_app.hpp"

int main() {
  // This test's own directory: a run left by an earlier build (another synthetic dataset) would be
  // refused as a run with a different configuration.
  std::filesystem::remove_all("footprint");
  const std::vector<const char*> argv = {
      "headroom-train", "run",           "--synthetic-dir", "footprint/data",
      "--store",        "footprint/store", "--runs-dir",   "footprint/runs",
      "--frames",       "20000",         "--max-epochs",   "1",
      "--batch-size",   "128",           "--threads",      "2",
      "--vgae-hidden",  "32,16",         "--latent",       "8",
      "--progress",     "false",         "--regenerate"};
  const int status = headroom::cli::run_training_app(static_cast<int>(argv.size()), argv.data());
  if (status != 0) {
    std::fprintf(stderr, "FAIL: the run exited %d\n", status);
    return 1;
  }
  // libtorch_cpu.so itself needs libcudart and libcupti (a few MiB; the wheel's CPU library is
  // built with the CUDA profiler), so those two are allowed; the CUDA libraries that weigh
  // (LibTorch's, cuBLAS, cuDNN, NCCL, ...), the driver and the plugin are not.
  const char* forbidden[] = {"libtorch_cuda", "libc10_cuda", "libcuda.so", "libnccl",
                             "libcublas",     "libcudnn",    "libcufft",   "libcusparse",
                             "libcusolver",   "libcurand",   "libnvrtc",   "libheadroom_cuda"};
  std::ifstream maps("/proc/self/maps");
  std::string line;
  int mapped = 0;
  int found = 0;
  while (std::getline(maps, line)) {
    ++mapped;
    for (const char* name : forbidden) {
      if (line.find(name) != std::string::npos) {
        std::fprintf(stderr, "FAIL: a CPU run maps %s\n", line.c_str());
        ++found;
      }
    }
  }
  if (mapped == 0) {
    std::fprintf(stderr, "FAIL: /proc/self/maps is empty or unreadable\n");
    return 1;
  }
  if (found > 0) return 1;
  std::printf("a CPU run of the main job mapped %d regions, none of them a CUDA library\n", mapped);
  return 0;
}
