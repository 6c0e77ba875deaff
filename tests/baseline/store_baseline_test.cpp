// The classical baseline on a store built from the synthetic dataset: each window's score is the
// mean surprise of its own frames, it learns from training windows only, and a CAN file changed
// since preprocessing is refused by name.
#include "headroom/baseline/store_baseline.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "headroom/can/frame_reader.hpp"
#include "headroom/can/log_format.hpp"
#include "headroom/eval/binary_metrics.hpp"
#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/store/graph_dataset_writer.hpp"
#include "headroom/synthetic/synthetic_traffic.hpp"
#include "test_support.hpp"

namespace headroom::baseline {
namespace {

class StoreBaselineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    testing::build_synthetic_store(dir_->path(), 30'000, 5);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static testing::TempDir* dir_;
};
testing::TempDir* StoreBaselineTest::dir_ = nullptr;

std::vector<can::CanFrame> read_all(const std::filesystem::path& file) {
  auto reader = can::open_frame_reader(file, {});
  std::vector<can::CanFrame> frames(1 << 16);
  std::vector<can::CanFrame> all;
  while (const auto n = reader->read(frames))
    all.insert(all.end(), frames.begin(), frames.begin() + n);
  return all;
}

// Every test window's score is the mean surprise of frames [window x stride, + window) of its
// file, read here independently of the baseline's own reading.
TEST_F(StoreBaselineTest, AWindowScoresTheMeanSurpriseOfItsFrames) {
  const auto store = store::GraphStore::open(*dir_ / "store");
  const std::vector<std::uint32_t> ids(store.test_ids().begin(), store.test_ids().end());
  const auto result = score_store_windows(store, ids);
  ASSERT_EQ(result.scores.size(), ids.size());
  EXPECT_GT(result.profile.ids(), 0U);
  const auto& m = store.metadata();
  const auto index = store.size_index();
  std::map<std::uint32_t, std::vector<float>> surprise_of_file;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto file = index.file[ids[i]];
    if (!surprise_of_file.contains(file))
      surprise_of_file[file] = frame_surprise(
          result.profile, read_all(std::filesystem::path(m.dataset_root) / m.files[file].path));
    const auto& surprise = surprise_of_file[file];
    const auto frames = read_all(std::filesystem::path(m.dataset_root) / m.files[file].path);
    const std::size_t begin = std::size_t{index.window[ids[i]]} * m.stride;
    const std::size_t end = std::min(begin + m.window, surprise.size());
    double sum = 0;
    double unknown = 0;
    for (std::size_t f = begin; f < end; ++f) {
      sum += surprise[f];
      unknown += result.profile.knows_id(frames[f].id) ? 0 : 1;
    }
    EXPECT_NEAR(result.scores[i], unknown + sum / static_cast<double>(end - begin) / kNovelSurprise,
                1e-5)
        << ids[i];
  }
  // What it is for: the synthetic attacks change timing and transitions, and it ranks them so.
  std::vector<std::uint8_t> labels;
  for (const auto g : ids) labels.push_back(index.label[g]);
  EXPECT_GT(eval::binary_metrics(labels, result.scores).roc_auc, 0.9);
}

// Normal training windows that are not validation windows score low: the profile was learnt on
// them. Validation windows are not learnt from, so their scores measure something.
TEST_F(StoreBaselineTest, LearnsFromTrainingWindowsOnly) {
  const auto store = store::GraphStore::open(*dir_ / "store");
  const auto index = store.size_index();
  std::vector<std::uint32_t> validation(store.validation_ids().begin(),
                                        store.validation_ids().end());
  std::sort(validation.begin(), validation.end());
  std::vector<std::uint32_t> trained;
  for (const auto g : store.train_ids())
    if (index.label[g] == 0 && !std::binary_search(validation.begin(), validation.end(), g))
      trained.push_back(g);
  ASSERT_FALSE(trained.empty());
  const auto result = score_store_windows(store, trained);
  // Every ID and transition of a trained window was learnt: no unknown ID, and a mean surprise of
  // timing alone (the scaled part stays under 1).
  for (const float score : result.scores) EXPECT_LT(score, 1.0F) << score;
}

// A CAN log of `frames` frames cycling through `ids` every 1 ms, from `start_s`; in each frame
// range [begin, end) of `attacks`, every 20th frame is an injected frame of ID 0x7FF (label 1).
std::string cycling_log(const std::vector<std::uint32_t>& ids, std::size_t frames, double start_s,
                        const std::vector<std::pair<std::size_t, std::size_t>>& attacks) {
  std::string csv = "timestamp,arbitration_id,data_field,attack\n";
  for (std::size_t i = 0; i < frames; ++i) {
    const bool attack = i % 20 == 0 && std::any_of(attacks.begin(), attacks.end(), [&](auto r) {
                          return i >= r.first && i < r.second;
                        });
    const std::uint32_t id = attack ? 0x7FF : ids[i % ids.size()];
    csv += fmt::format("{:.6f},{:X},0011223344556677,{}\n",
                       start_s + 0.001 * static_cast<double>(i), id, attack ? 1 : 0);
  }
  return csv;
}

// The same with attacks from frame `attack_from` to the end.
std::string cycling_log(const std::vector<std::uint32_t>& ids, std::size_t frames, double start_s,
                        std::size_t attack_from) {
  return cycling_log(ids, frames, start_s, {{attack_from, frames}});
}

// A store of one training recording of a known vehicle (IDs 0x100-0x104, no attack), a test
// recording of it with attacks from frame 3,000, and `new_vehicle_log` as a test recording of an
// unknown vehicle, preprocessed under `dir`.
store::GraphStore two_vehicle_store(const testing::TempDir& dir,
                                    const std::string& new_vehicle_log) {
  const std::vector<std::uint32_t> known = {0x100, 0x101, 0x102, 0x103, 0x104};
  testing::write_text_file(dir / "data/train_01_attack_free/a.csv",
                           cycling_log(known, 20'000, 1000.0, 20'000));
  testing::write_text_file(dir / "data/test_01_known_vehicle_known_attack/b.csv",
                           cycling_log(known, 6'000, 2000.0, 3'000));
  testing::write_text_file(dir / "data/test_02_unknown_vehicle_known_attack/c.csv",
                           new_vehicle_log);
  preprocess::PreprocessOptions options;
  options.progress = 0;
  preprocess::preprocess_dataset(dir / "data", dir / "store", options);
  return store::GraphStore::open(dir / "store");
}

const std::vector<std::uint32_t> kOtherVehicle = {0x200, 0x201, 0x202, 0x203};

// Label-free, a test file of a vehicle the training traffic does not know (the median first window
// holds an unknown ID) is scored again under a profile that also learnt its first windows, labels
// unread: its normal windows are then known traffic and its attacks (an ID it never carried)
// stand out, where the training profile flags every window alike. A known vehicle's file keeps
// the training profile.
TEST(StoreBaseline, AdaptsToANewVehicleOnItsFirstWindowsAndNotToAKnownOne) {
  testing::TempDir dir;
  const auto store = two_vehicle_store(dir, cycling_log(kOtherVehicle, 6'000, 3000.0, 3'000));
  const std::vector<std::uint32_t> ids(store.test_ids().begin(), store.test_ids().end());
  const BaselineAdaptation adaptation{
      .adaptation_windows = 20, .learned_windows = 10, .fence_mads = 3.0};
  const auto result = score_store_windows(store, ids, adaptation);
  ASSERT_EQ(result.label_free_scores.size(), ids.size());
  const auto index = store.size_index();
  const auto& m = store.metadata();
  std::size_t new_vehicle_windows = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const bool new_vehicle =
        m.splits[index.split[ids[i]]].name.find("unknown") != std::string::npos;
    const bool attack = index.label[ids[i]] != 0;
    if (!new_vehicle) {
      EXPECT_EQ(result.label_free_scores[i], result.scores[i]) << ids[i];
      continue;
    }
    ++new_vehicle_windows;
    EXPECT_GE(result.scores[i], 1.0F) << ids[i];  // every frame an unknown ID to training
    if (attack)
      EXPECT_GE(result.label_free_scores[i], 1.0F) << ids[i];
    else
      EXPECT_LT(result.label_free_scores[i], 1.0F) << ids[i];
  }
  EXPECT_GT(new_vehicle_windows, 20U);
  EXPECT_TRUE(score_store_windows(store, ids).label_free_scores.empty());
  EXPECT_THROW(score_store_windows(
                   store, ids, {.adaptation_windows = 2, .learned_windows = 3, .fence_mads = 3}),
               std::invalid_argument);
}

// Label-picked (the upper bound beside the label-free decision), a new vehicle is learnt from its
// first normal windows by label: a capture that opens with an attack teaches the label-free
// profile the attacker's ID, so its later attacks pass as known traffic, while the label-picked
// profile never sees it and flags them. A known vehicle keeps the training profile either way.
TEST(StoreBaseline, LabelPickedAdaptationLearnsANewVehicleFromItsNormalWindowsOnly) {
  testing::TempDir dir;
  // Attacks in its first 8 windows (of 100 frames) and again from frame 4,000.
  const auto store =
      two_vehicle_store(dir, cycling_log(kOtherVehicle, 6'000, 3000.0, {{0, 800}, {4'000, 6'000}}));
  const std::vector<std::uint32_t> ids(store.test_ids().begin(), store.test_ids().end());
  const auto result = score_store_windows(store, ids,
                                          {.adaptation_windows = 20,
                                           .learned_windows = 10,
                                           .fence_mads = 3.0,
                                           .calibration_windows = 20,
                                           .calibration_learned_windows = 10});
  ASSERT_EQ(result.calibration_scores.size(), ids.size());
  const auto index = store.size_index();
  const auto& m = store.metadata();
  std::size_t late_attacks = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const bool new_vehicle =
        m.splits[index.split[ids[i]]].name.find("unknown") != std::string::npos;
    if (!new_vehicle) {
      EXPECT_EQ(result.calibration_scores[i], result.scores[i]) << ids[i];
      continue;
    }
    if (index.label[ids[i]] == 0) {
      EXPECT_LT(result.calibration_scores[i], 1.0F) << ids[i];
    } else if (index.window[ids[i]] >= 20) {
      ++late_attacks;
      EXPECT_GE(result.calibration_scores[i], 1.0F) << ids[i];
      EXPECT_LT(result.label_free_scores[i], 1.0F) << ids[i] << ": learnt the attacker's ID";
    }
  }
  EXPECT_GT(late_attacks, 10U);
  EXPECT_THROW(
      score_store_windows(store, ids, {.calibration_windows = 2, .calibration_learned_windows = 3}),
      std::invalid_argument);
}

// The baseline reads the store's CAN files again: one gone, or one with a frame more than the store
// read, is refused naming it (evaluation then logs why and goes on without the baseline).
TEST(StoreBaseline, AMissingOrChangedFileIsRefusedByName) {
  testing::TempDir dir;
  synthetic::generate_synthetic_dataset(dir / "data", {.seed = 3, .total_frames = 12'000}, false);
  preprocess::PreprocessOptions options;
  options.progress = 0;
  preprocess::preprocess_dataset(dir / "data", dir / "store", options);
  const auto store = store::GraphStore::open(dir / "store");
  const auto& file = store.metadata().files.front().path;
  const auto victim = std::filesystem::path(store.metadata().dataset_root) / file;
  const auto expect_refused = [&](const std::string& reason) {
    try {
      score_store_windows(store, store.test_ids());
      FAIL() << "not refused: " << reason;
    } catch (const BaselineUnavailable& e) {
      EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  };
  EXPECT_NO_THROW(score_store_windows(store, store.test_ids()));
  std::filesystem::rename(victim, dir / "aside.csv");
  expect_refused("cannot be read back");
  std::filesystem::rename(dir / "aside.csv", victim);
  std::ofstream(victim, std::ios::app) << "1672533999.0,7DF,0000000000000000,0\n";
  expect_refused("the file changed since preprocessing");
}

// A dataset in a CSV layout that only a column mapping describes (the README's "Your own data")
// silently lost the baseline and the hybrid: the baseline read the files back without the mapping
// and could not recognise them. The store records how its files were read; the baseline reads
// them so, and scores the same traffic exactly as it scores it in the preset layout.
// (Mutation seen to fail: read_store_file with default ReaderOptions.)
TEST(StoreBaseline, ReadsAMappedCsvDatasetBackWithTheStoresMapping) {
  testing::TempDir dir;
  synthetic::generate_synthetic_dataset(dir / "data", {.seed = 5, .total_frames = 12'000}, false);
  // The same traffic, as "Zeit;Kennung;Nutzdaten;Klasse" rows: no preset reads it.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir / "data")) {
    if (entry.path().extension() != ".csv") continue;
    const auto target = dir / "mapped" / entry.path().lexically_relative(dir / "data");
    std::filesystem::create_directories(target.parent_path());
    std::ifstream in(entry.path());
    std::ofstream out(target);
    std::string line;
    std::getline(in, line);
    out << "Zeit;Kennung;Nutzdaten;Klasse\n";
    while (std::getline(in, line)) {
      std::replace(line.begin(), line.end(), ',', ';');
      out << line << '\n';
    }
  }
  preprocess::PreprocessOptions preset;
  preset.progress = 0;
  preprocess::preprocess_dataset(dir / "data", dir / "preset-store", preset);
  preprocess::PreprocessOptions mapped = preset;
  mapped.reader.format = can::LogFormat::kMappedCsv;
  mapped.reader.mapping.delimiter = ';';
  mapped.reader.mapping.timestamp = "Zeit";
  mapped.reader.mapping.id = "Kennung";
  mapped.reader.mapping.payload = "Nutzdaten";
  mapped.reader.mapping.label = "Klasse";
  preprocess::preprocess_dataset(dir / "mapped", dir / "mapped-store", mapped);
  const auto reopened = store::GraphStore::open(dir / "mapped-store");
  EXPECT_EQ(reopened.metadata().source_format, can::LogFormat::kMappedCsv);
  EXPECT_EQ(reopened.metadata().source_mapping.id, "Kennung");
  const auto reference = store::GraphStore::open(dir / "preset-store");
  ASSERT_EQ(reopened.num_graphs(), reference.num_graphs());
  const auto expected = score_store_windows(reference, reference.test_ids()).scores;
  EXPECT_EQ(score_store_windows(reopened, reopened.test_ids()).scores, expected);
}

// A store of graphs that are not CAN windows (imported graph tables, a text corpus) has no traffic
// to learn from: refused naming the store, before any file is looked for.
TEST(StoreBaseline, AStoreNotBuiltFromCanLogsIsRefusedByName) {
  testing::TempDir dir;
  {
    store::GraphDatasetWriter writer(dir / "graphs", {.created_by = "a test"});
    const std::vector<float> node = {0.0F};
    for (int g = 0; g < 12; ++g)
      writer.append({.node_features = node,
                     .edges = {},
                     .edge_features = {},
                     .label = static_cast<std::uint8_t>(g % 2),
                     .split = g < 10 ? store::DatasetSplit::kTrain : store::DatasetSplit::kTest});
    writer.commit();
  }
  const auto store = store::GraphStore::open(dir / "graphs");
  try {
    score_store_windows(store, store.test_ids());
    FAIL() << "not refused";
  } catch (const BaselineUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find((dir / "graphs").string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not built from CAN logs (a test)"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace headroom::baseline
