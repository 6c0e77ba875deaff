#include "headroom/memory/peak_fit_cache.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace headroom::memory {
namespace {

// Three probe steps whose peaks are 1.5 MB + 812.25 B per node + 96.5 B per edge.
constexpr double peak_of(double nodes, double edges) {
  return 1.5e6 + 812.25 * nodes + 96.5 * edges;
}
const std::vector<PeakSample> kSamples = {{10, 20, 1, peak_of(10, 20)},
                                          {100, 200, 10, peak_of(100, 200)},
                                          {400, 900, 30, peak_of(400, 900)}};

PeakFit example_fit() { return fit_peak(kSamples); }

const nlohmann::json kKey = {{"model", {{"kind", "gat"}, {"hidden", 64}}}, {"precision", "32"}};

TEST(PeakFitCache, StoredFitIsReadBackUnderItsKeyOnly) {
  testing::TempDir dir;
  const PeakFitCache cache(dir / "fits");
  EXPECT_FALSE(cache.load(kKey).has_value());
  const PeakFit fit = example_fit();
  const auto file = cache.store(kKey, fit, kSamples);
  EXPECT_EQ(file, cache.file_for(kKey));
  EXPECT_TRUE(std::filesystem::exists(file));

  std::string note = "stale";
  const auto loaded = cache.load(kKey, &note);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(note, "");
  EXPECT_EQ(loaded->fit.fixed_bytes, fit.fixed_bytes);
  EXPECT_EQ(loaded->fit.bytes_per_node, fit.bytes_per_node);
  EXPECT_EQ(loaded->fit.bytes_per_edge, fit.bytes_per_edge);
  EXPECT_EQ(loaded->fit.bytes_per_graph, fit.bytes_per_graph);
  ASSERT_EQ(loaded->samples.size(), 3u);
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
  const auto file = cache.store(kKey, example_fit(), kSamples);
  // Same file name, different key inside (as after a hash collision or a hand edit).
  auto json = nlohmann::json::parse(std::ifstream(file));
  json["key"]["precision"] = "16-mixed";
  testing::write_text_file(file, json.dump());
  std::string note;
  EXPECT_FALSE(cache.load(kKey, &note).has_value());
  EXPECT_NE(note.find("holds another key"), std::string::npos) << note;
  testing::write_text_file(file, "{\"key\": ");  // torn
  EXPECT_FALSE(cache.load(kKey, &note).has_value());
  EXPECT_NE(note.find("not a JSON object"), std::string::npos) << note;
  json["key"] = kKey;
  json.erase("fit");
  testing::write_text_file(file, json.dump());
  EXPECT_FALSE(cache.load(kKey, &note).has_value());
  EXPECT_NE(note.find("lacks a field"), std::string::npos) << note;
  // Storing again repairs it.
  cache.store(kKey, example_fit(), kSamples);
  EXPECT_TRUE(cache.load(kKey, &note).has_value());
  EXPECT_EQ(note, "");
}

// Issue 25 item 10: a file edited into valid JSON whose fit would split every step (zero or
// negative coefficients) or refuse every graph (huge ones) is discarded with a note naming the
// file and the reason, never used.
TEST(PeakFitCache, AFitThatIsNotTheFitOfItsSamplesIsDiscardedWithANote) {
  testing::TempDir dir;
  const PeakFitCache cache(dir.path());
  const auto file = cache.store(kKey, example_fit(), kSamples);
  const auto pristine = nlohmann::json::parse(std::ifstream(file));
  const auto edited = [&](const std::function<void(nlohmann::json&)>& edit) {
    auto json = pristine;
    edit(json);
    testing::write_text_file(file, json.dump());
    std::string note;
    EXPECT_FALSE(cache.load(kKey, &note).has_value());
    EXPECT_NE(note.find("peak-fit cache file " + file.string() + " discarded: "), std::string::npos)
        << note;
    return note;
  };
  const auto zero = edited([](nlohmann::json& j) {
    for (const char* c : {"fixed_bytes", "bytes_per_node", "bytes_per_edge", "bytes_per_graph"})
      j["fit"][c] = 0.0;
  });
  EXPECT_NE(zero.find("are not the fit of its own probe samples"), std::string::npos) << zero;
  const auto negative = edited([](nlohmann::json& j) { j["fit"]["bytes_per_node"] = -812.25; });
  EXPECT_NE(negative.find("are not the fit"), std::string::npos) << negative;
  const auto huge = edited([](nlohmann::json& j) { j["fit"]["fixed_bytes"] = 1e300; });
  EXPECT_NE(huge.find("are not the fit"), std::string::npos) << huge;
  const auto one_sample = edited([](nlohmann::json& j) { j["samples"].erase(1); });
  EXPECT_NE(one_sample.find("are not the fit"), std::string::npos) << one_sample;
  const auto no_samples = edited([](nlohmann::json& j) { j["samples"] = nlohmann::json::array(); });
  EXPECT_NE(no_samples.find("a fit needs 2"), std::string::npos) << no_samples;
  const auto zero_peak = edited([](nlohmann::json& j) { j["samples"][0]["peak_bytes"] = 0.0; });
  EXPECT_NE(zero_peak.find("not a positive number"), std::string::npos) << zero_peak;
}

TEST(PeakModel, AFreshSampleFarFromTheFitIsAProblem) {
  const PeakFit fit = example_fit();
  const PeakSample near{200, 400, 20, fit.predict(200, 400, 20) * 1.2};
  EXPECT_EQ(fresh_sample_problem(fit, near, 0.5), "");
  const PeakSample far{200, 400, 20, fit.predict(200, 400, 20) / 1000};
  const auto problem = fresh_sample_problem(fit, far, 0.5);
  EXPECT_NE(problem.find("for a probe batch of 20 graphs (200 nodes, 400 edges), measured now"),
            std::string::npos)
      << problem;
  PeakFit negative = fit;
  negative.fixed_bytes = -1e9;
  EXPECT_NE(fresh_sample_problem(negative, near, 1e9), "");
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
