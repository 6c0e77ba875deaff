// Preprocessing in shards (`--shard I/N`) and assembling the parts gives the store one process
// builds: every array file byte for byte and the same manifest (checksums included), for any N --
// more shards than files too -- and whatever the options that depend on the vocabulary. Assembly
// refuses, naming the problem, missing parts, parts of another N or other settings, and a dataset
// that changed; the output-path rules are those of a store.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/preprocess/sharded_preprocess.hpp"
#include "headroom/preprocess/store_part.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/synthetic/synthetic_traffic.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using preprocess::ShardSpec;
using testing::TempDir;

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Every file of two stores is byte-identical (the manifest included: both were built from the
// dataset at the same path, which it records), and both open with full verification.
void expect_identical_stores(const fs::path& expected, const fs::path& actual) {
  std::size_t compared = 0;
  for (const auto& entry : fs::directory_iterator(expected)) {
    const auto name = entry.path().filename();
    ASSERT_TRUE(fs::exists(actual / name)) << name;
    EXPECT_TRUE(read_bytes(entry.path()) == read_bytes(actual / name)) << name << " differs";
    ++compared;
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(actual), fs::directory_iterator{}),
            static_cast<std::ptrdiff_t>(compared));
  const auto one = store::GraphStore::open(expected, store::StoreVerification::kFull);
  const auto other = store::GraphStore::open(actual, store::StoreVerification::kFull);
  for (const auto& [name, record] : one.metadata().arrays)
    EXPECT_EQ(record.xxh3, other.metadata().arrays.at(name).xxh3) << name;
}

// Runs every shard of `count` (in reverse order: the order must not matter), then the assembly.
preprocess::AssemblyReport build_sharded(const fs::path& data, const fs::path& store,
                                         const preprocess::PreprocessOptions& options,
                                         std::uint32_t count) {
  for (std::uint32_t i = count; i-- > 0;)
    preprocess::preprocess_shard(data, store, options, ShardSpec{i, count});
  return preprocess::assemble_store(data, store, options);
}

// The message of what `run` throws (empty when it throws nothing).
std::string error_of(const std::function<void()>& run) {
  try {
    run();
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

class ShardedPreprocess : public ::testing::Test {
 protected:
  void SetUp() override {
    synthetic::SyntheticDatasetOptions synthetic;
    synthetic.total_frames = 60000;
    synthetic.seed = 5;
    synthetic::generate_synthetic_dataset(data_, synthetic, /*overwrite=*/false);
    options_.threads = 2;
    options_.progress = 0;
  }

  std::size_t file_count() const {
    return dataset::scan_dataset(data_, options_.scan).files.size();
  }

  TempDir dir_;
  fs::path data_ = dir_ / "data";
  preprocess::PreprocessOptions options_;
};

TEST_F(ShardedPreprocess, ThreeShardsAssembleIntoTheSingleProcessStore) {
  preprocess::preprocess_dataset(data_, dir_ / "single", options_);
  const auto report = build_sharded(data_, dir_ / "sharded", options_, 3);
  EXPECT_EQ(report.parts, 3U);
  // The synthetic unknown-vehicle tests hold IDs outside the vocabulary: their windows are the
  // ones a part cannot key, rebuilt at assembly. Without them this test would not test that.
  EXPECT_GT(report.rekeyed_files, 0U);
  EXPECT_GT(report.rebuilt_windows, 0U);
  expect_identical_stores(dir_ / "single", dir_ / "sharded");
  EXPECT_FALSE(fs::exists(preprocess::parts_directory(dir_ / "sharded")))
      << "the parts are removed once the store is in place";
}

TEST_F(ShardedPreprocess, MoreShardsThanFilesLeaveSomePartsEmpty) {
  preprocess::preprocess_dataset(data_, dir_ / "single", options_);
  const auto count = static_cast<std::uint32_t>(file_count() + 3);
  std::size_t empty = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto shard = preprocess::preprocess_shard(data_, dir_ / "sharded", options_, {i, count});
    empty += shard.files.empty();
  }
  EXPECT_EQ(empty, 3U) << "every file in one shard, the lightest shards first";
  preprocess::assemble_store(data_, dir_ / "sharded", options_);
  expect_identical_stores(dir_ / "single", dir_ / "sharded");
}

TEST_F(ShardedPreprocess, OneShardIsTheSingleProcessStoreToo) {
  preprocess::preprocess_dataset(data_, dir_ / "single", options_);
  build_sharded(data_, dir_ / "sharded", options_, 1);
  expect_identical_stores(dir_ / "single", dir_ / "sharded");
}

// The settings whose effect a part cannot apply (vocabulary from normal frames only, a file-level
// validation split) and overlapping windows.
TEST_F(ShardedPreprocess, VocabularyFromNormalFramesFileSplitAndOverlappingWindows) {
  options_.vocabulary_from = "normal";
  options_.validation_by = "files";
  options_.window = {50, 20};
  preprocess::preprocess_dataset(data_, dir_ / "single", options_);
  build_sharded(data_, dir_ / "sharded", options_, 2);
  expect_identical_stores(dir_ / "single", dir_ / "sharded");
}

// An identity other than the CAN ID keys test files by raw ID in one process too, and the extra
// feature groups widen every node row: the assembly keeps the parts' graphs and still counts the
// windows of mostly unknown IDs.
TEST_F(ShardedPreprocess, FrequencyRankIdentityWithTimingAndPayloadFeatures) {
  options_.features = {graph::NodeIdentity::kFrequencyRank, true, true};
  preprocess::preprocess_dataset(data_, dir_ / "single", options_);
  const auto report = build_sharded(data_, dir_ / "sharded", options_, 3);
  EXPECT_GT(report.rekeyed_files, 0U) << "test files with fuzzed IDs take the raw-key path";
  EXPECT_EQ(report.rebuilt_windows, 0U) << "no window is rebuilt: raw keys are final";
  expect_identical_stores(dir_ / "single", dir_ / "sharded");
  const auto store = store::GraphStore::open(dir_ / "sharded");
  EXPECT_EQ(store.metadata().node_feature_count, 19U);
  EXPECT_EQ(store.metadata().node_features, options_.features);
}

// Duplicate training files are found across shards: the copy is left out, as by one process.
TEST(ShardedPreprocessDuplicates, ACopyInAnotherShardIsLeftOutAsByOneProcess) {
  TempDir dir;
  std::string text = "timestamp,arbitration_id,data_field,attack\n";
  std::string upper = text;
  for (int i = 0; i < 3000; ++i) {
    const unsigned id = 0x100U * (1 + static_cast<unsigned>(i * 7 % 5));
    text += fmt::format("{:.3f},{:x},{:02x}00,{}\n", 1.0 + 0.001 * i, id, i % 256, 0);
    upper += fmt::format("{:.3f},{:X},{:02X}00,{}\n", 1.0 + 0.001 * i, id, i % 256, 0);
  }
  testing::write_text_file(dir / "data/train_01_attack_free/attack-free-1.csv", text);
  testing::write_text_file(dir / "data/train_02_with_attacks/attack-free-1.csv", upper);
  testing::write_text_file(dir / "data/test_01_known_vehicle_known_attack/attack-free-1.csv", text);
  preprocess::PreprocessOptions options;
  options.threads = 2;
  options.progress = 0;
  const auto layout = dataset::scan_dataset(dir / "data");
  const auto shards = preprocess::assign_shards(layout, 3);
  ASSERT_NE(shards[0], shards[1]) << "the two copies are read by different shards";

  const auto single = preprocess::preprocess_dataset(dir / "data", dir / "single", options);
  const auto sharded = build_sharded(dir / "data", dir / "sharded", options, 3);
  ASSERT_EQ(sharded.store.duplicates.size(), 2U);
  EXPECT_EQ(sharded.store.duplicates[0].path, single.duplicates[0].path);
  EXPECT_TRUE(sharded.store.duplicates[0].left_out);
  EXPECT_FALSE(sharded.store.duplicates[1].left_out) << "a test copy is only reported";
  expect_identical_stores(dir / "single", dir / "sharded");
}

TEST_F(ShardedPreprocess, AssemblyNamesTheMissingParts) {
  preprocess::preprocess_shard(data_, dir_ / "store", options_, {0, 3});
  const auto message =
      error_of([&] { preprocess::assemble_store(data_, dir_ / "store", options_); });
  EXPECT_NE(message.find("lacks parts 1-of-3, 2-of-3 of 3"), std::string::npos) << message;
  EXPECT_NE(message.find("--shard 1/3"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(dir_ / "store"));
  EXPECT_TRUE(fs::exists(preprocess::parts_directory(dir_ / "store") / "0-of-3" / "part.json"))
      << "a failed assembly keeps the parts";
}

TEST_F(ShardedPreprocess, AssemblyWithoutAnyPartSaysHowToMakeThem) {
  const auto message =
      error_of([&] { preprocess::assemble_store(data_, dir_ / "store", options_); });
  EXPECT_NE(message.find("no store parts in"), std::string::npos) << message;
  EXPECT_NE(message.find("--shard I/N"), std::string::npos) << message;
}

TEST_F(ShardedPreprocess, PartsOfDifferentShardCountsAreRefused) {
  preprocess::preprocess_shard(data_, dir_ / "store", options_, {0, 2});
  preprocess::preprocess_shard(data_, dir_ / "store", options_, {1, 2});
  preprocess::preprocess_shard(data_, dir_ / "store", options_, {0, 3});
  const auto message =
      error_of([&] { preprocess::assemble_store(data_, dir_ / "store", options_); });
  EXPECT_NE(message.find("parts of different shard counts (0-of-2, 1-of-2, 0-of-3)"),
            std::string::npos)
      << message;
}

TEST_F(ShardedPreprocess, APartBuiltWithOtherSettingsIsNamedWithTheDifference) {
  preprocess::preprocess_shard(data_, dir_ / "store", options_, {0, 2});
  auto other = options_;
  other.window = {50, 50};
  preprocess::preprocess_shard(data_, dir_ / "store", other, {1, 2});
  auto message = error_of([&] { preprocess::assemble_store(data_, dir_ / "store", options_); });
  EXPECT_NE(message.find("part 1-of-2 was built with other settings than this command: --stride 50 "
                         "(this command: 100)"),
            std::string::npos)
      << message;

  // The assembling command's own flags are checked too: here every part differs from it.
  other = options_;
  other.vocabulary_from = "normal";
  message = error_of([&] { preprocess::assemble_store(data_, dir_ / "store", other); });
  EXPECT_NE(message.find("part 0-of-2 was built with other settings than this command"),
            std::string::npos)
      << message;
}

TEST_F(ShardedPreprocess, ADatasetThatChangedSinceTheShardsRanIsRefused) {
  preprocess::preprocess_shard(data_, dir_ / "store", options_, {0, 1});
  testing::write_text_file(data_ / "test_01_known_vehicle_known_attack" / "DoS-9.csv",
                           "timestamp,arbitration_id,data_field,attack\n1.0,100,00,0\n");
  const auto message =
      error_of([&] { preprocess::assemble_store(data_, dir_ / "store", options_); });
  EXPECT_NE(
      message.find("this command's dataset has \"test_01_known_vehicle_known_attack/DoS-9.csv\""),
      std::string::npos)
      << message;
}

TEST_F(ShardedPreprocess, ATruncatedPartIsRefusedNamingTheFile) {
  preprocess::preprocess_shard(data_, dir_ / "store", options_, {0, 1});
  const auto part = preprocess::parts_directory(dir_ / "store") / "0-of-1";
  const auto segment = part / "file-000000.node_features";
  fs::resize_file(segment, fs::file_size(segment) - 4);
  const auto message =
      error_of([&] { preprocess::assemble_store(data_, dir_ / "store", options_); });
  EXPECT_NE(message.find("file-000000.node_features"), std::string::npos) << message;
}

TEST_F(ShardedPreprocess, OutputRulesAreThoseOfAStore) {
  const auto store = dir_ / "store";
  const auto part = preprocess::parts_directory(store) / "0-of-2";
  // A part that exists is replaced only with --force.
  preprocess::preprocess_shard(data_, store, options_, {0, 2});
  auto message = error_of([&] { preprocess::preprocess_shard(data_, store, options_, {0, 2}); });
  EXPECT_NE(message.find("exists (use --force to replace it)"), std::string::npos) << message;
  auto forced = options_;
  forced.overwrite = true;
  preprocess::preprocess_shard(data_, store, forced, {0, 2});
  EXPECT_TRUE(fs::exists(part / "part.json"));

  // --force never replaces a directory headroom did not write.
  const auto foreign = preprocess::parts_directory(store) / "1-of-2";
  testing::write_text_file(foreign / "notes.txt", "mine");
  message = error_of([&] { preprocess::preprocess_shard(data_, store, forced, {1, 2}); });
  EXPECT_NE(message.find("is not a store part that headroom wrote"), std::string::npos) << message;
  EXPECT_EQ(read_bytes(foreign / "notes.txt"), "mine");

  // A shard refuses early what the assembly would refuse: an existing store without --force, or
  // anything but a store even with it; and an output inside the dataset.
  testing::write_text_file(dir_ / "taken" / "notes.txt", "mine");
  message = error_of([&] {
    preprocess::preprocess_shard(data_, dir_ / "taken", options_, {0, 2});
  });
  EXPECT_NE(message.find("already exists (use --force"), std::string::npos) << message;
  message = error_of([&] { preprocess::preprocess_shard(data_, dir_ / "taken", forced, {0, 2}); });
  EXPECT_NE(message.find("is not a graph store that headroom wrote"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(preprocess::parts_directory(dir_ / "taken")));
  message = error_of([&] {
    preprocess::preprocess_shard(data_, data_ / "store", options_, {0, 2});
  });
  EXPECT_NE(message.find("is inside the dataset"), std::string::npos) << message;

  // The assembly refuses to replace an existing store without --force, before touching the parts.
  preprocess::preprocess_dataset(data_, dir_ / "existing", options_);
  preprocess::preprocess_shard(data_, dir_ / "existing", forced, {0, 1});
  message = error_of([&] { preprocess::assemble_store(data_, dir_ / "existing", options_); });
  EXPECT_NE(message.find("already exists (use --force"), std::string::npos) << message;
  EXPECT_TRUE(fs::exists(preprocess::parts_directory(dir_ / "existing") / "0-of-1" / "part.json"));
  preprocess::assemble_store(data_, dir_ / "existing", forced);
  EXPECT_NO_THROW(store::GraphStore::open(dir_ / "existing", store::StoreVerification::kFull));
}

TEST(ShardPlan, ParsesIOfNAndRefusesAnIndexOutOfRange) {
  EXPECT_EQ(preprocess::parse_shard("2/4"), (ShardSpec{2, 4}));
  EXPECT_EQ(preprocess::parse_shard("0/1"), (ShardSpec{0, 1}));
  EXPECT_NE(error_of([] { preprocess::parse_shard("4/4"); }).find("must be below 4 (0 to 3)"),
            std::string::npos);
  for (const char* bad : {"1/0", "-1/4", "2", "a/b", "1/4/2", "", "1 /4"})
    EXPECT_NE(error_of([&] { preprocess::parse_shard(bad); }).find("--shard must be I/N"),
              std::string::npos)
        << bad;
  EXPECT_EQ(preprocess::parse_shard_name("3-of-8"), (ShardSpec{3, 8}));
  for (const char* other : {"3-of-3", "03-of-8", "3-of-8.tmp-123", "notes", "3-of-"})
    EXPECT_FALSE(preprocess::parse_shard_name(other).has_value()) << other;
}

TEST(ShardPlan, BalancesBytesAndIsDeterministic) {
  dataset::DatasetLayout layout;
  for (const std::uint64_t bytes : {100, 900, 300, 500, 300, 100})
    layout.files.push_back({"", "", 0, "", bytes});
  const auto shards = preprocess::assign_shards(layout, 2);
  // Largest first onto the lighter shard: 900 -> 0; 500, 300 and 300 -> 1 (800 < 900 before the
  // last); the 100s -> 0. 1100 bytes each.
  EXPECT_EQ(shards, (std::vector<std::uint32_t>{0, 0, 1, 1, 1, 0}));
  EXPECT_EQ(preprocess::assign_shards(layout, 2), shards);
  std::vector<std::size_t> all;
  for (std::uint32_t i = 0; i < 4; ++i)
    for (const auto f : preprocess::files_of_shard(layout, {i, 4})) all.push_back(f);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5})) << "every file in exactly one shard";
}

// The acceptance test: hcrl_sa (two duplicate training files) in 3 shards equals the
// single-process store. Its training fuzzing covers every 11-bit ID, so with the default vocabulary
// no test ID is unknown; with --vocabulary-from normal the unknown-vehicle tests are full of
// unknown IDs, and their windows are rebuilt at assembly.
TEST(ShardedPreprocessOnRealData, HcrlSaInThreeShardsEqualsTheSingleProcessStore) {
  HEADROOM_REQUIRE_SHARED_DATA();
  const auto data = testing::shared_data_dir() / "can" / "hcrl_sa";
  if (!fs::exists(data)) GTEST_SKIP() << data << " is absent: real-data test skipped";
  const auto seconds = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  for (const char* vocabulary_from : {"all", "normal"}) {
    SCOPED_TRACE(vocabulary_from);
    TempDir dir;
    preprocess::PreprocessOptions options;
    options.progress = 0;
    options.threads = 2;
    options.vocabulary_from = vocabulary_from;
    const auto started = std::chrono::steady_clock::now();
    preprocess::preprocess_dataset(data, dir / "single", options);
    const auto single = std::chrono::steady_clock::now();
    double slowest_shard = 0.0;
    for (std::uint32_t i = 0; i < 3; ++i)
      slowest_shard =
          std::max(slowest_shard,
                   preprocess::preprocess_shard(data, dir / "sharded", options, {i, 3}).seconds);
    const auto report = preprocess::assemble_store(data, dir / "sharded", options);
    std::cout << fmt::format(
        "hcrl_sa, --vocabulary-from {}, 2 threads: one process {:.2f} s; 3 shards, the slowest "
        "{:.2f} s, assembly {:.2f} s ({} test windows rebuilt)\n",
        vocabulary_from, seconds(started, single), slowest_shard, report.store.seconds,
        report.rebuilt_windows);
    ASSERT_EQ(report.store.duplicates.size(), 2U) << "hcrl_sa's twin attack-free files";
    EXPECT_TRUE(report.store.duplicates[0].left_out);
    if (std::string(vocabulary_from) == "normal") {
      EXPECT_GT(report.rebuilt_windows, 0U);
    }
    expect_identical_stores(dir / "single", dir / "sharded");
  }
}

}  // namespace
}  // namespace headroom
