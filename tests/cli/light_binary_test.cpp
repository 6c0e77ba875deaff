// The data side does not load LibTorch: `headroom` links and loads no torch library for
// --version, --help, generate, preprocess or inspect, and hands training subcommands to
// headroom-train with the same arguments.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>

#include "test_support.hpp"

namespace headroom {
namespace {

using testing::run_command;
using testing::TempDir;

bool mentions_torch(const std::string& text) {
  return text.find("libtorch") != std::string::npos || text.find("libc10") != std::string::npos;
}

// The shared libraries the dynamic loader initialised while running `args` (LD_DEBUG=libs).
std::string loaded_libraries(const std::string& args, int* status) {
  std::string output;
  *status = run_command(fmt::format("LD_DEBUG=libs '{}' {} 2>&1 >/dev/null | grep 'calling init'",
                                    HEADROOM_BINARY, args),
                        &output);
  return output;
}

TEST(LightBinary, LinksNoTorchLibrary) {
  std::string output;
  ASSERT_EQ(run_command(fmt::format("ldd '{}'", HEADROOM_BINARY), &output), 0) << output;
  EXPECT_NE(output.find("libc.so"), std::string::npos) << output;  // ldd really listed them
  EXPECT_FALSE(mentions_torch(output)) << output;

  ASSERT_EQ(run_command(fmt::format("ldd '{}'", HEADROOM_TRAIN_BINARY), &output), 0) << output;
  EXPECT_TRUE(mentions_torch(output)) << "the control: the training binary does link LibTorch";
}

TEST(LightBinary, VersionHelpAndInspectLoadNoTorch) {
  TempDir dir;
  const auto store = testing::build_synthetic_store(dir.path(), 20000, 5);
  for (const std::string& args : {std::string("--version"), std::string("--help"),
                                  fmt::format("inspect '{}'", store.string())}) {
    int status = -1;
    const auto libraries = loaded_libraries(args, &status);
    EXPECT_NE(libraries.find("libc.so"), std::string::npos) << args << "\n" << libraries;
    EXPECT_FALSE(mentions_torch(libraries)) << args << "\n" << libraries;
  }
}

TEST(LightBinary, TrainingSubcommandsAreHandedOver) {
  std::string output;
  ASSERT_EQ(run_command(fmt::format("'{}' --help", HEADROOM_BINARY), &output), 0) << output;
  for (const char* name : {"generate", "preprocess", "inspect", "run", "autoencoder", "curriculum",
                           "normal", "evaluation", "plan"})
    EXPECT_NE(output.find(name), std::string::npos) << name << "\n" << output;

  // The training binary parses the training flags: only it knows --memory-budget.
  ASSERT_EQ(run_command(fmt::format("'{}' normal --help", HEADROOM_BINARY), &output), 0) << output;
  EXPECT_NE(output.find("--memory-budget"), std::string::npos) << output;
  EXPECT_NE(output.find("Usage: headroom normal"), std::string::npos) << output;

  int status = -1;
  const auto libraries = loaded_libraries("plan --help", &status);
  EXPECT_TRUE(mentions_torch(libraries)) << "plan runs in headroom-train\n" << libraries;
}

TEST(LightBinary, AMissingTrainingBinaryIsAClearError) {
  std::string output;
  const int status = run_command(
      fmt::format("HEADROOM_TRAIN_BINARY=/nonexistent/headroom-train '{}' normal --store x 2>&1",
                  HEADROOM_BINARY),
      &output);
  EXPECT_NE(status, 0);
  EXPECT_NE(output.find("/nonexistent/headroom-train: cannot start the training binary"),
            std::string::npos)
      << output;
}

}  // namespace
}  // namespace headroom
