#include "headroom/memory/peak_fit_cache.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace headroom::memory {
namespace {

PeakFit example_fit() {
  PeakFit fit;
  fit.fixed_bytes = 1.5e6;
  fit.bytes_per_node = 812.25;
  fit.bytes_per_edge = 96.5;
  fit.bytes_per_graph = -3.0;
  fit.max_relative_error = 0.004;
  fit.samples = 2;
  return fit;
}

const nlohmann::json kKey = {{"model", {{"kind", "gat"}, {"hidden", 64}}}, {"precision", "32"}};

TEST(PeakFitCache, StoredFitIsReadBackUnderItsKeyOnly) {
  testing::TempDir dir;
  const PeakFitCache cache(dir / "fits");
  EXPECT_FALSE(cache.load(kKey).has_value());
  const std::vector<PeakSample> samples = {{10, 20, 1, 2e6}, {100, 200, 10, 1.6e7}};
  const auto file = cache.store(kKey, example_fit(), samples);
  EXPECT_EQ(file, cache.file_for(kKey));
  EXPECT_TRUE(std::filesystem::exists(file));

  const auto loaded = cache.load(kKey);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->fit.fixed_bytes, 1.5e6);
  EXPECT_EQ(loaded->fit.bytes_per_node, 812.25);
  EXPECT_EQ(loaded->fit.bytes_per_edge, 96.5);
  EXPECT_EQ(loaded->fit.bytes_per_graph, -3.0);
  ASSERT_EQ(loaded->samples.size(), 2u);
  EXPECT_EQ(loaded->samples[1].edges, 200u);
  EXPECT_EQ(loaded->file, file);

  auto other = kKey;
  other["precision"] = "bf16-mixed";
  EXPECT_NE(cache.file_for(other), file);
  EXPECT_FALSE(cache.load(other).has_value());
}

TEST(PeakFitCache, AFileHoldingAnotherKeyOrGarbageIsAMiss) {
  testing::TempDir dir;
  const PeakFitCache cache(dir.path());
  const auto file = cache.store(kKey, example_fit(), {});
  // Same file name, different key inside (as after a hash collision or a hand edit).
  auto json = nlohmann::json::parse(std::ifstream(file));
  json["key"]["precision"] = "16-mixed";
  testing::write_text_file(file, json.dump());
  EXPECT_FALSE(cache.load(kKey).has_value());
  testing::write_text_file(file, "{\"key\": ");  // torn
  EXPECT_FALSE(cache.load(kKey).has_value());
  json["key"] = kKey;
  json.erase("fit");
  testing::write_text_file(file, json.dump());
  EXPECT_FALSE(cache.load(kKey).has_value());
  // Storing again repairs it.
  cache.store(kKey, example_fit(), {});
  EXPECT_TRUE(cache.load(kKey).has_value());
}

TEST(PeakFitCache, AnEmptyDirectoryDisablesTheCache) {
  const PeakFitCache cache{std::filesystem::path()};
  EXPECT_FALSE(cache.enabled());
  EXPECT_TRUE(cache.store(kKey, example_fit(), {}).empty());
  EXPECT_FALSE(cache.load(kKey).has_value());
}

TEST(PeakFitCache, DefaultDirectoryFollowsTheEnvironment) {
  const char* saved = std::getenv("HEADROOM_CACHE_DIR");
  const std::string restore = saved != nullptr ? saved : "";
  setenv("HEADROOM_CACHE_DIR", "/some/where", 1);
  EXPECT_EQ(default_peak_fit_cache_dir(), std::filesystem::path("/some/where/peak-fits"));
  setenv("HEADROOM_CACHE_DIR", "off", 1);
  EXPECT_TRUE(default_peak_fit_cache_dir().empty());
  if (saved != nullptr)
    setenv("HEADROOM_CACHE_DIR", restore.c_str(), 1);
  else
    unsetenv("HEADROOM_CACHE_DIR");
}

}  // namespace
}  // namespace headroom::memory
