// scripts/gpu-check.sh, the one command that checks the GPU claims, on a machine without a GPU:
// its arguments, the report it writes when there is no CUDA device, and (dry) the commands it
// would run on one or two GPUs. What it finds on a GPU goes into docs/benchmarks.md.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "test_support.hpp"

namespace headroom {
namespace {

std::string slurp(const std::filesystem::path& file) {
  std::ifstream in(file);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Runs the script with `arguments` (and `environment` before it); its output in `output`.
int gpu_check(const std::string& arguments, std::string* output,
              const std::string& environment = "") {
  return testing::run_command(
      environment + " " + HEADROOM_SOURCE_DIR "/scripts/gpu-check.sh " + arguments + " 2>&1",
      output);
}

TEST(GpuCheck, WithoutACudaDeviceEveryCheckIsSkippedAndTheRunSucceeds) {
  testing::TempDir dir;
  const auto report = dir / "report.md";
  std::string output;
  ASSERT_EQ(gpu_check("--out " + report.string() + " --work " + (dir / "work").string(), &output,
                      "HEADROOM_NVIDIA_SMI=/bin/false"),
            0)
      << output;
  const auto text = slurp(report);
  EXPECT_NE(text.find("No CUDA device: every GPU check skipped."), std::string::npos) << text;
  EXPECT_NE(text.find("Dataset for the chain: synthetic, generated."), std::string::npos) << text;
  for (const char* step : {"info", "cuda-tests", "budgets", "nccl", "chain", "side-by-side"})
    EXPECT_NE(text.find(std::string("| ") + step + " | skipped | - | no CUDA device |"),
              std::string::npos)
        << step << "\n"
        << text;
}

// gpu-bundle.sh packs a CAN dataset (hcrl_sa where the shared data is) as data/NAME: the chain
// times it unless --dataset names another; the report says which and where it came from.
TEST(GpuCheck, TheChainUsesTheDatasetTheBundleCarries) {
  testing::TempDir dir;
  const auto root = dir / "pack" / "headroom-gpu";
  for (const char* sub : {"bin", "lib", "data/tiny_can/train_01_attack_free"})
    std::filesystem::create_directories(root / sub);
  testing::write_text_file(root / "binary-paths", "");
  const auto bundle = dir / "bundle.tar";
  ASSERT_EQ(testing::run_command("tar -C " + (dir / "pack").string() + " -cf " + bundle.string() +
                                 " headroom-gpu"),
            0);
  const auto report = dir / "report.md";
  std::string output;
  const auto arguments = "--bundle " + bundle.string() + " --out " + report.string() + " --work ";
  ASSERT_EQ(
      gpu_check(arguments + (dir / "work").string(), &output, "HEADROOM_NVIDIA_SMI=/bin/false"), 0)
      << output;
  EXPECT_NE(slurp(report).find("Dataset for the chain: tiny_can (carried in the bundle)."),
            std::string::npos)
      << slurp(report);
  // A dataset given by name wins over the carried one.
  const auto given = dir / "mine";
  std::filesystem::create_directories(given);
  ASSERT_EQ(gpu_check(arguments + (dir / "work2").string() + " --dataset " + given.string(),
                      &output, "HEADROOM_NVIDIA_SMI=/bin/false"),
            0)
      << output;
  EXPECT_NE(slurp(report).find("Dataset for the chain: mine (given with --dataset)."),
            std::string::npos)
      << slurp(report);
}

TEST(GpuCheck, ADryRunPlansEveryCheckForTheGpusItIsTold) {
  testing::TempDir dir;
  const auto report = dir / "report.md";
  std::string output;
  ASSERT_EQ(gpu_check("--dry-run --gpus 2 --out " + report.string() + " --work " +
                          (dir / "work").string(),
                      &output),
            0)
      << output;
  const auto text = slurp(report);
  // The CUDA tests by name, each preset at both budgets, NCCL on one and on two ranks, the chain in
  // 16-mixed, the side-by-side bench on CUDA; nothing ran.
  EXPECT_NE(text.find("--gtest_filter=FusedGatCudaTest.*:CudaTraining.*"), std::string::npos);
  for (const char* preset : {"vgae,teacher", "gat,teacher", "vgae,student", "gat,student"})
    for (const char* budget : {"1GB", "4GB"})
      EXPECT_NE(
          text.find(std::string("--preset ") + preset + " --device cuda --memory-budget " + budget),
          std::string::npos)
          << preset << " at " << budget;
  EXPECT_NE(text.find("--nproc-per-node 1"), std::string::npos);
  EXPECT_NE(text.find("--nproc-per-node 2"), std::string::npos);
  EXPECT_NE(text.find("--precision 16-mixed"), std::string::npos);
  EXPECT_NE(text.find("bench/side_by_side.sh"), std::string::npos);
  EXPECT_NE(text.find("dry run (nothing ran), planned for 2 GPU(s)"), std::string::npos);
  EXPECT_EQ(text.find("| pass |"), std::string::npos);

  // One GPU: no two-rank run is planned.
  ASSERT_EQ(gpu_check("--dry-run --only nccl --out " + report.string(), &output), 0) << output;
  const auto one = slurp(report);
  EXPECT_NE(one.find("--nproc-per-node 1"), std::string::npos);
  EXPECT_EQ(one.find("--nproc-per-node 2"), std::string::npos);
  EXPECT_EQ(one.find("| budgets |"), std::string::npos);
}

TEST(GpuCheck, BadArgumentsAreRefusedByNameBeforeAnythingRuns) {
  testing::TempDir dir;
  const auto report = dir / "report.md";
  const auto refused = [&](const std::string& arguments, const std::string& message) {
    std::string output;
    EXPECT_EQ(gpu_check(arguments, &output), 2) << arguments;
    EXPECT_NE(output.find(message), std::string::npos) << arguments << ": " << output;
  };
  const auto to = " --out " + report.string();
  refused("--time-budget 0" + to, "--time-budget must be a positive number of seconds, not '0'");
  refused("--only info,warp-speed" + to, "unknown step 'warp-speed' in --only");
  refused("--frobnicate" + to, "unknown option '--frobnicate'");
  refused("--gpus 2" + to, "--gpus only plans a --dry-run");
  refused("--bundle " + (dir / "missing.tar.xz").string() + to, "no bundle at");
  refused(to + " --work", "--work needs a value");
  EXPECT_FALSE(std::filesystem::exists(report));
}

}  // namespace
}  // namespace headroom
