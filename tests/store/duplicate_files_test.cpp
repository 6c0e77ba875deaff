// Training files that repeat another file's frames are left out of the store, so that no window
// is both trained on and validated on (hcrl_sa ships the same attack-free traffic in train_01 and
// train_02). Duplicates are found by the frames, not the bytes: hcrl_sa's twin Parquet files
// differ in their bytes.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/util/content_hash.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

using testing::TempDir;
using testing::write_text_file;

// `n` rows of deterministic traffic over four IDs, written with upper- or lowercase hex: the same
// frames in different bytes.
std::string traffic_csv(std::size_t n, bool lowercase, std::uint64_t seed, bool attacks) {
  std::string text = "timestamp,arbitration_id,data_field,attack\n";
  std::uint64_t state = seed;
  for (std::size_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto id = 0x100U * (1 + static_cast<unsigned>((state >> 33) % 4));
    const auto byte = static_cast<unsigned>((state >> 20) & 0xFF);
    const int attack = attacks && i % 50 < 10 ? 1 : 0;
    text += lowercase ? fmt::format("{:.6f},{:x},{:02x}00{:02x},{}\n", 1000.0 + 0.001 * i, id, byte,
                                    i % 256, attack)
                      : fmt::format("{:.6f},{:X},{:02X}00{:02X},{}\n", 1000.0 + 0.001 * i, id, byte,
                                    i % 256, attack);
  }
  return text;
}

// A graph's content: every array of it, hashed.
std::uint64_t window_hash(const store::GraphView& graph) {
  util::ContentHash hash;
  hash.update(std::as_bytes(graph.node_features));
  hash.update(std::as_bytes(graph.node_can_ids));
  hash.update(std::as_bytes(graph.edge_index));
  hash.update(std::as_bytes(graph.edge_features));
  return hash.digest();
}

// Validation windows identical to a training window.
std::size_t leaked_windows(const store::GraphStore& store) {
  std::set<std::uint64_t> training;
  for (const auto id : store.train_ids()) training.insert(window_hash(store.graph(id)));
  std::size_t leaked = 0;
  for (const auto id : store.validation_ids())
    leaked += training.count(window_hash(store.graph(id)));
  return leaked;
}

class DuplicateFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    write_text_file(dir_ / "data/train_01_attack_free/attack-free-1.csv",
                    traffic_csv(3000, false, 11, false));
    write_text_file(dir_ / "data/train_02_with_attacks/attack-free-1.csv",
                    traffic_csv(3000, true, 11, false));
    write_text_file(dir_ / "data/train_02_with_attacks/DoS-1.csv",
                    traffic_csv(2000, false, 12, true));
    write_text_file(dir_ / "data/test_01_known_vehicle_known_attack/attack-free-1.csv",
                    traffic_csv(3000, false, 11, false));
    options_.threads = 2;
    options_.progress = 0;
  }

  preprocess::PreprocessReport build(const std::string& name) {
    return preprocess::preprocess_dataset(dir_ / "data", dir_ / name, options_);
  }

  TempDir dir_;
  preprocess::PreprocessOptions options_;
};

TEST_F(DuplicateFiles, TrainingCopiesAreLeftOutAndTestCopiesReported) {
  const auto report = build("store");
  ASSERT_EQ(report.duplicates.size(), 2U);
  EXPECT_EQ(report.duplicates[0].path, "train_02_with_attacks/attack-free-1.csv");
  EXPECT_EQ(report.duplicates[0].same_as, "train_01_attack_free/attack-free-1.csv");
  EXPECT_TRUE(report.duplicates[0].left_out);
  EXPECT_EQ(report.duplicates[1].path, "test_01_known_vehicle_known_attack/attack-free-1.csv");
  EXPECT_FALSE(report.duplicates[1].left_out) << "a test file is reported, never dropped";

  const auto store = store::GraphStore::open(dir_ / "store", store::StoreVerification::kFull);
  std::vector<std::string> files;
  for (const auto& file : store.metadata().files) files.push_back(file.path);
  EXPECT_EQ(std::count(files.begin(), files.end(), "train_02_with_attacks/attack-free-1.csv"), 0);
  EXPECT_EQ(files.size(), 3U);
  const auto& excluded = store.metadata().excluded_files;
  EXPECT_NE(std::find(excluded.begin(), excluded.end(), "train_02_with_attacks/attack-free-1.csv"),
            excluded.end());
  // No left-over segment files in the committed store.
  for (const auto& entry : std::filesystem::directory_iterator(dir_ / "store"))
    EXPECT_EQ(entry.path().string().find("segment"), std::string::npos) << entry.path();
}

TEST_F(DuplicateFiles, TheDeduplicatedSplitHoldsNoWindowInBothTrainingAndValidation) {
  build("store");
  EXPECT_EQ(leaked_windows(store::GraphStore::open(dir_ / "store")), 0U);
  // The control: keeping the copy puts identical windows on both sides.
  options_.keep_duplicate_files = true;
  const auto kept = build("kept");
  EXPECT_TRUE(kept.duplicates[0].path == "train_02_with_attacks/attack-free-1.csv" &&
              !kept.duplicates[0].left_out);
  EXPECT_GT(leaked_windows(store::GraphStore::open(dir_ / "kept")), 0U);
}

TEST_F(DuplicateFiles, AFileLevelSplitKeepsEveryFileOnOneSide) {
  write_text_file(dir_ / "data/train_02_with_attacks/fuzzing-1.csv",
                  traffic_csv(1500, false, 13, true));
  write_text_file(dir_ / "data/train_01_attack_free/attack-free-2.csv",
                  traffic_csv(2500, false, 14, false));
  options_.validation_by = "files";
  options_.validation_fraction = 0.3;
  build("store");
  const auto store = store::GraphStore::open(dir_ / "store");
  EXPECT_EQ(store.metadata().validation_by, "files");
  const auto index = store.size_index();
  std::map<std::uint32_t, std::set<bool>> sides;  // file -> {in validation?}
  for (const auto id : store.train_ids()) sides[index.file[id]].insert(false);
  for (const auto id : store.validation_ids()) sides[index.file[id]].insert(true);
  for (const auto& [file, in] : sides) EXPECT_EQ(in.size(), 1U) << "file " << file;
  EXPECT_FALSE(store.validation_ids().empty());
  EXPECT_FALSE(store.train_ids().empty());
  EXPECT_EQ(leaked_windows(store), 0U);
}

TEST(DuplicateFilesOnRealData, HcrlSaTwinsAreLeftOutAndNothingLeaks) {
  HEADROOM_REQUIRE_SHARED_DATA();
  TempDir dir;
  preprocess::PreprocessOptions options;
  options.progress = 0;
  const auto report = preprocess::preprocess_dataset(testing::shared_data_dir() / "can" / "hcrl_sa",
                                                     dir / "store", options);
  std::vector<std::string> left_out;
  for (const auto& duplicate : report.duplicates)
    if (duplicate.left_out) left_out.push_back(duplicate.path);
  std::sort(left_out.begin(), left_out.end());
  EXPECT_EQ(left_out,
            (std::vector<std::string>{"train_02_with_attacks/attack-free-kia.parquet",
                                      "train_02_with_attacks/attack-free-sonata.parquet"}));
  EXPECT_EQ(leaked_windows(store::GraphStore::open(dir / "store")), 0U);
}

}  // namespace
}  // namespace headroom
