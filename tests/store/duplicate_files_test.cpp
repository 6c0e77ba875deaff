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
#include "headroom/store/store_builder.hpp"
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

// Attacks and normal traffic in separate recordings (as hcrl_sa's training files are): a file-level
// validation split still holds both, and training keeps both.
TEST(FileLevelSplit, StratifiesFilesWithAttacksAndAllNormalFiles) {
  // Files 0-2 all normal (100, 50, 80 graphs); files 3 and 4 hold attacks (60 and 40 graphs),
  // each too big for a fifth of its stratum alone (20 graphs): the smallest one goes.
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> files = {
      {0, 100}, {1, 50}, {2, 80}, {3, 60}, {4, 40}};
  std::vector<std::uint32_t> graphs;
  std::vector<std::uint32_t> file_of;
  std::vector<std::uint8_t> label_of;
  for (const auto& [file, count] : files)
    for (std::uint32_t g = 0; g < count; ++g) {
      graphs.push_back(static_cast<std::uint32_t>(graphs.size()));
      file_of.push_back(file);
      label_of.push_back(file >= 3 && g % 3 == 0 ? 1 : 0);
    }
  for (const std::uint64_t seed : {1U, 2U, 3U, 42U}) {
    const auto split = store::split_train_validation_by_file(graphs, file_of, label_of, 0.2, seed);
    std::map<std::uint32_t, std::set<bool>> sides;
    std::set<std::uint8_t> validation_labels;
    std::set<std::uint8_t> train_labels;
    std::set<std::uint32_t> validation_attack_files;
    for (const auto g : split.validation) {
      sides[file_of[g]].insert(true);
      validation_labels.insert(label_of[g]);
      if (file_of[g] >= 3) validation_attack_files.insert(file_of[g]);
    }
    for (const auto g : split.train) {
      sides[file_of[g]].insert(false);
      train_labels.insert(label_of[g]);
    }
    EXPECT_EQ(split.validation.size() + split.train.size(), graphs.size()) << seed;
    for (const auto& [file, in] : sides) EXPECT_EQ(in.size(), 1U) << "file " << file;
    EXPECT_EQ(validation_labels, (std::set<std::uint8_t>{0, 1})) << seed;
    EXPECT_EQ(train_labels, (std::set<std::uint8_t>{0, 1})) << seed;
    EXPECT_EQ(validation_attack_files, (std::set<std::uint32_t>{4})) << seed;
    EXPECT_EQ(
        split.validation,
        store::split_train_validation_by_file(graphs, file_of, label_of, 0.2, seed).validation);
  }
  // A stratum of one file keeps it in training.
  const std::vector<std::uint8_t> one_attack_file(label_of.size(), 0);
  auto only_file_4 = one_attack_file;
  for (std::size_t k = 0; k < file_of.size(); ++k)
    if (file_of[k] == 4) only_file_4[k] = 1;
  const auto split = store::split_train_validation_by_file(graphs, file_of, only_file_4, 0.2, 7);
  for (const auto g : split.validation) EXPECT_NE(file_of[g], 4U);
  EXPECT_THROW(store::split_train_validation_by_file(graphs, file_of, {0, 1}, 0.2, 7),
               std::invalid_argument);
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
