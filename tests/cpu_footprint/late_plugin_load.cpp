// CudaPlugin.ALateLoadIsRefusedByItsCause: LibTorch looks its CUDA hooks up once; a program that
// seeds (torch::manual_seed asks about CUDA) before loading the plugin keeps the CPU-only stub and
// used to fail far later ("Cannot initialize CUDA without ATen_cuda library", the first GPU check's
// training_bench). load_cuda_plugin must refuse at once, saying why. Linked as the CPU binaries
// are (the test binary links LibTorch's CUDA library itself, which registers the hooks).
#include <torch/torch.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "headroom/nn/cuda_runtime.hpp"

int main() {
  if (!std::filesystem::exists(headroom::nn::cuda_plugin_path())) {
    std::printf("SKIP: no CUDA plugin at %s (built without a CUDA compiler)\n",
                headroom::nn::cuda_plugin_path().c_str());
    return 77;
  }
  torch::manual_seed(1);
  try {
    headroom::nn::load_cuda_plugin();
  } catch (const std::logic_error& error) {
    const std::string message = error.what();
    if (message.find("asked about CUDA before the CUDA plugin was loaded") == std::string::npos) {
      std::fprintf(stderr, "FAIL: refused, but not by its cause: %s\n", error.what());
      return 1;
    }
    std::printf("refused: %s\n", error.what());
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "FAIL: the plugin did not load: %s\n", error.what());
    return 1;
  }
  std::fprintf(stderr, "FAIL: a load after torch::manual_seed was accepted\n");
  return 1;
}
