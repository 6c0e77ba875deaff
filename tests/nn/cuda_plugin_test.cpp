// CUDA is a plugin (nn/cuda_runtime.hpp): a missing or foreign plugin is an error naming the file,
// and on this machine the plugin loads (LibTorch's CUDA libraries with it) and then finds no
// device. Also registers the test binary's own use of the plugin: on a machine with an NVIDIA
// driver the CUDA cases get it (and the fused kernels) as headroom-train would.
#include "headroom/nn/cuda_runtime.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_support.hpp"

namespace headroom::nn {
namespace {

namespace fs = std::filesystem;

[[maybe_unused]] const bool kCudaForTheCudaCases = [] {
  try {
    return load_cuda_plugin_if_usable();
  } catch (const std::exception& error) {
    ADD_FAILURE() << error.what();
    return false;
  }
}();

class CudaPluginTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    store_ = testing::build_synthetic_store(dir_->path(), 20000);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  // `headroom normal --device cuda` with HEADROOM_CUDA_PLUGIN set to `plugin` (unset when empty);
  // returns its output, expecting it to fail.
  static std::string failed_cuda_run(const std::string& plugin) {
    const std::string env = plugin.empty() ? "env -u HEADROOM_CUDA_PLUGIN"
                                           : "env HEADROOM_CUDA_PLUGIN='" + plugin + "'";
    std::string output;
    const int status = testing::run_command(
        env + " '" + HEADROOM_TRAIN_BINARY + "' normal --store '" + store_.string() +
            "' --runs-dir '" + (dir_->path() / "runs").string() + "' --device cuda 2>&1",
        &output);
    EXPECT_NE(status, 0) << output;
    return output;
  }

  static testing::TempDir* dir_;
  static fs::path store_;
};

testing::TempDir* CudaPluginTest::dir_ = nullptr;
fs::path CudaPluginTest::store_;

TEST_F(CudaPluginTest, AMissingPluginIsAnErrorNamingTheFile) {
  const auto output = failed_cuda_run("/nonexistent/libheadroom_cuda.so");
  EXPECT_NE(output.find("cannot load headroom's CUDA plugin /nonexistent/libheadroom_cuda.so: "),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("--device cpu"), std::string::npos) << output;
}

TEST_F(CudaPluginTest, ALibraryThatIsNotThePluginIsRefusedByName) {
  // Any shared library without the plugin's table: the C library will do.
  const auto output = failed_cuda_run("libm.so.6");
  EXPECT_NE(output.find("libm.so.6 is not headroom's CUDA plugin (no symbol "
                        "headroom_cuda_plugin_table)"),
            std::string::npos)
      << output;
}

TEST_F(CudaPluginTest, ThePluginLoadsAndFindsNoDeviceHere) {
  const fs::path plugin = fs::path(HEADROOM_TRAIN_BINARY).parent_path() / ".." / "lib" /
                          "libheadroom_cuda.so";
  if (!fs::exists(plugin)) GTEST_SKIP() << "built without a CUDA compiler: no plugin";
  if (fs::exists("/proc/driver/nvidia/version") || fs::exists("/dev/nvidiactl"))
    GTEST_SKIP() << "this machine has a GPU";
  const auto output = failed_cuda_run("");
  EXPECT_NE(output.find("--device cuda: no CUDA device is available on this machine"),
            std::string::npos)
      << output;
}

}  // namespace
}  // namespace headroom::nn
