#include "headroom/memory/cuda_allocator_defaults.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace headroom::memory {
namespace {

// Saves and restores both variables around a test.
class CudaAllocatorDefaults : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 2; ++i) {
      if (const char* value = std::getenv(kNames[i])) saved_[i] = value;
      unsetenv(kNames[i]);
    }
  }
  void TearDown() override {
    for (int i = 0; i < 2; ++i) {
      if (saved_[i])
        setenv(kNames[i], saved_[i]->c_str(), 1);
      else
        unsetenv(kNames[i]);
    }
  }
  static constexpr const char* kNames[] = {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"};
  std::optional<std::string> saved_[2];
};

TEST_F(CudaAllocatorDefaults, ExpandableSegmentsWhenTheUserSetNothing) {
  EXPECT_EQ(cuda_allocator_settings(), "");
  EXPECT_TRUE(default_to_expandable_segments());
  ASSERT_NE(std::getenv("PYTORCH_CUDA_ALLOC_CONF"), nullptr);
  EXPECT_STREQ(std::getenv("PYTORCH_CUDA_ALLOC_CONF"), "expandable_segments:True");
  EXPECT_EQ(cuda_allocator_settings(), "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
}

TEST_F(CudaAllocatorDefaults, TheUsersSettingWins) {
  setenv("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128", 1);
  EXPECT_FALSE(default_to_expandable_segments());
  EXPECT_STREQ(std::getenv("PYTORCH_CUDA_ALLOC_CONF"), "max_split_size_mb:128");
}

TEST_F(CudaAllocatorDefaults, TheNewerVariableNameAlsoWins) {
  setenv("PYTORCH_ALLOC_CONF", "expandable_segments:False", 1);
  EXPECT_FALSE(default_to_expandable_segments());
  EXPECT_EQ(std::getenv("PYTORCH_CUDA_ALLOC_CONF"), nullptr);
  EXPECT_EQ(cuda_allocator_settings(), "PYTORCH_ALLOC_CONF=expandable_segments:False");
}

}  // namespace
}  // namespace headroom::memory
