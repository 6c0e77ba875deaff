#include "headroom/synthetic/synthetic_traffic.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "headroom/synthetic/synthetic_vehicle.hpp"
#include "headroom/util/staged_directory.hpp"
#include "test_support.hpp"

namespace headroom::can {
using namespace headroom::synthetic;  // NOLINT: the generator under test
namespace {

namespace fs = std::filesystem;

// A deliberately tiny reader of the generated CSV, independent of the project's readers.
struct Row {
  std::int64_t time_us = 0;
  std::uint32_t id = 0;
  std::vector<std::uint8_t> data;
  int label = 0;
};

struct ParsedFile {
  std::string header;
  std::vector<Row> rows;
  std::string first_bad_line;  // empty when every row matches the format
};

const std::regex& row_pattern() {
  // Seconds with exactly 6 decimals; 11-bit ID in uppercase hex without 0x or leading zeros;
  // 0-8 bytes as uppercase hex pairs; label 0/1.
  static const std::regex pattern(
      R"(^[0-9]{10}\.[0-9]{6},(0|[1-7][0-9A-F]{2}|[1-9A-F][0-9A-F]?),([0-9A-F]{2}){0,8},[01]$)");
  return pattern;
}

ParsedFile parse_file(const fs::path& file) {
  ParsedFile parsed;
  std::ifstream in(file);
  std::getline(in, parsed.header);
  std::string line;
  while (std::getline(in, line)) {
    if (parsed.first_bad_line.empty() && !std::regex_match(line, row_pattern())) {
      parsed.first_bad_line = line;
    }
    Row row;
    const auto dot = line.find('.');
    const auto c1 = line.find(',');
    const auto c2 = line.find(',', c1 + 1);
    const auto c3 = line.find(',', c2 + 1);
    row.time_us = std::stoll(line.substr(0, dot)) * 1'000'000 +
                  std::stoll(line.substr(dot + 1, c1 - dot - 1));
    row.id = static_cast<std::uint32_t>(std::stoul(line.substr(c1 + 1, c2 - c1 - 1), nullptr, 16));
    for (auto i = c2 + 1; i + 1 < c3; i += 2) {
      row.data.push_back(static_cast<std::uint8_t>(std::stoul(line.substr(i, 2), nullptr, 16)));
    }
    row.label = line[c3 + 1] - '0';
    parsed.rows.push_back(std::move(row));
  }
  return parsed;
}

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The attack type of a file: its name up to the last '-'.
std::string type_of(const fs::path& file) {
  const std::string stem = file.stem().string();
  return stem.substr(0, stem.rfind('-'));
}

std::set<std::uint32_t> ecu_ids(const SyntheticVehicle& vehicle) {
  std::set<std::uint32_t> ids;
  for (const auto& ecu : vehicle.ecus) ids.insert(ecu.id);
  return ids;
}

// Groups the attack frames of a file into bursts separated by more than 100 ms.
std::vector<std::vector<const Row*>> attack_bursts(const std::vector<Row>& rows) {
  std::vector<std::vector<const Row*>> bursts;
  for (const auto& row : rows) {
    if (row.label != 1) continue;
    if (bursts.empty() || row.time_us - bursts.back().back()->time_us > 100'000)
      bursts.emplace_back();
    bursts.back().push_back(&row);
  }
  return bursts;
}

// The payload bytes as one number (a set of vectors trips a GCC 12 -O3 false warning).
std::uint64_t packed(const std::vector<std::uint8_t>& data) {
  std::uint64_t value = 0;
  for (const std::uint8_t b : data) value = value << 8 | b;
  return value;
}

std::vector<fs::path> files_under(const fs::path& root) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) files.push_back(fs::relative(entry.path(), root));
  }
  std::sort(files.begin(), files.end());
  return files;
}

// One realistic dataset shared by the read-only tests: generating it once keeps the suite fast.
class SyntheticTraffic : public ::testing::Test {
 protected:
  static constexpr std::uint64_t kSeed = 7;
  static constexpr std::uint64_t kFrames = 150'000;

  static void SetUpTestSuite() {
    dir_ = std::make_unique<testing::TempDir>();
    summary_ = generate_synthetic_dataset(root(), {.seed = kSeed, .total_frames = kFrames}, false);
    vehicle_ = make_synthetic_vehicle(kSeed);
    for (const auto& file : summary_.files)
      parsed_[file.relative_path] = parse_file(root() / file.relative_path);
  }
  static void TearDownTestSuite() {
    parsed_.clear();
    dir_.reset();
  }

  static fs::path root() { return dir_->path() / "dataset"; }
  static const ParsedFile& parsed(const SyntheticFileSummary& file) {
    return parsed_.at(file.relative_path);
  }
  static std::vector<const SyntheticFileSummary*> files_of_type(const std::string& type) {
    std::vector<const SyntheticFileSummary*> files;
    for (const auto& file : summary_.files) {
      if (file.attack_type == type) files.push_back(&file);
    }
    return files;
  }

  static inline std::unique_ptr<testing::TempDir> dir_;
  static inline SyntheticDatasetSummary summary_;
  static inline SyntheticVehicle vehicle_;
  static inline std::map<fs::path, ParsedFile> parsed_;
};

TEST_F(SyntheticTraffic, WritesTheLayoutWithExactFrameCounts) {
  const std::vector<fs::path> expected = {
      "synthetic.json",
      "test_01_known_vehicle_known_attack/DoS-2.csv",
      "test_01_known_vehicle_known_attack/fuzzing-2.csv",
      "test_02_known_vehicle_unknown_attack/spoofing-1.csv",
      "train_01_attack_free/attack-free-1.csv",
      "train_01_attack_free/attack-free-2.csv",
      "train_02_with_attacks/DoS-1.csv",
      "train_02_with_attacks/fuzzing-1.csv",
  };
  EXPECT_EQ(files_under(root()), expected);
  EXPECT_EQ(summary_.ecu_count, vehicle_.ecus.size());

  std::uint64_t total = 0;
  for (const auto& file : summary_.files) {
    SCOPED_TRACE(file.relative_path.string());
    const ParsedFile& p = parsed(file);
    EXPECT_EQ(p.rows.size(), file.frames);
    const auto attacks =
        std::count_if(p.rows.begin(), p.rows.end(), [](const Row& r) { return r.label == 1; });
    EXPECT_EQ(static_cast<std::uint64_t>(attacks), file.attack_frames);
    EXPECT_EQ(file.attack_type, type_of(file.relative_path));
    total += file.frames;
  }
  EXPECT_EQ(total, kFrames);
}

TEST_F(SyntheticTraffic, EveryRowMatchesTheCanTrainTestFormat) {
  for (const auto& file : summary_.files) {
    SCOPED_TRACE(file.relative_path.string());
    const ParsedFile& p = parsed(file);
    EXPECT_EQ(p.header, "timestamp,arbitration_id,data_field,attack");
    EXPECT_EQ(p.first_bad_line, "");
    for (const auto& row : p.rows) {
      ASSERT_LE(row.data.size(), 8U);
      ASSERT_GT(row.time_us, 1'600'000'000'000'000) << "timestamps look like Unix time";
    }
  }
}

TEST_F(SyntheticTraffic, RowsAreSortedByTimestamp) {
  for (const auto& file : summary_.files) {
    const auto& rows = parsed(file).rows;
    for (std::size_t i = 1; i < rows.size(); ++i) {
      ASSERT_LT(rows[i - 1].time_us, rows[i].time_us) << file.relative_path << " row " << i;
    }
  }
}

TEST_F(SyntheticTraffic, AttackFreeFilesFollowEveryEcuSchedule) {
  const auto files = files_of_type("attack-free");
  ASSERT_EQ(files.size(), 2U);
  for (const auto* file : files) {
    SCOPED_TRACE(file->relative_path.string());
    EXPECT_EQ(file->attack_frames, 0U);
    std::map<std::uint32_t, std::vector<const Row*>> by_id;
    for (const auto& row : parsed(*file).rows) {
      EXPECT_EQ(row.label, 0);
      by_id[row.id].push_back(&row);
    }
    ASSERT_EQ(by_id.size(), vehicle_.ecus.size()) << "every ECU, and only ECUs, on the bus";
    for (const auto& ecu : vehicle_.ecus) {
      SCOPED_TRACE(ecu.id);
      const auto& rows = by_id[ecu.id];
      ASSERT_GE(rows.size(), 6U) << "enough frames to measure the period";
      std::vector<std::int64_t> gaps;
      for (std::size_t i = 1; i < rows.size(); ++i)
        gaps.push_back(rows[i]->time_us - rows[i - 1]->time_us);
      std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
      const std::int64_t median = gaps[gaps.size() / 2];
      EXPECT_LE(std::abs(median - ecu.period_us), ecu.jitter_us)
          << "median inter-arrival " << median << " us, period " << ecu.period_us << " us";
      for (const Row* row : rows) ASSERT_EQ(row->data.size(), ecu.dlc);
    }
  }
}

TEST_F(SyntheticTraffic, RollingCountersIncrementAndChecksumsHold) {
  std::size_t counters_checked = 0;
  for (const auto* file : files_of_type("attack-free")) {
    SCOPED_TRACE(file->relative_path.string());
    std::map<std::uint32_t, const Row*> previous;
    for (const auto& row : parsed(*file).rows) {
      const auto ecu = std::find_if(vehicle_.ecus.begin(), vehicle_.ecus.end(),
                                    [&](const EcuSpec& e) { return e.id == row.id; });
      ASSERT_NE(ecu, vehicle_.ecus.end());
      if (ecu->checksum) {
        ASSERT_EQ(row.data[ecu->checksum->byte], synthetic_checksum(*ecu, row.data)) << row.time_us;
      }
      const Row*& prev = previous[row.id];
      if (ecu->counter && prev != nullptr) {
        const auto& c = *ecu->counter;
        const unsigned mask = (1U << c.bits) - 1;
        const unsigned before = (prev->data[c.byte] >> c.shift) & mask;
        const unsigned now = (row.data[c.byte] >> c.shift) & mask;
        ASSERT_EQ(now, (before + 1) & mask)
            << "ID " << std::hex << row.id << " at " << std::dec << row.time_us;
        ++counters_checked;
      }
      prev = &row;
    }
  }
  EXPECT_GT(counters_checked, 10'000U);
}

TEST_F(SyntheticTraffic, SignalsVarySlowly) {
  // Between consecutive frames of an ECU a signal moves by a small part of its range (random
  // bytes would move by a third of it on average), and the signals do move.
  const auto raw = [](const SignalField& field, const Row& row) {
    return field.width == 2 ? row.data[field.byte] << 8 | row.data[field.byte + 1]
                            : int{row.data[field.byte]};
  };
  std::size_t moving_fields = 0;
  for (const auto* file : files_of_type("attack-free")) {
    std::map<std::uint32_t, std::vector<const Row*>> by_id;
    for (const auto& row : parsed(*file).rows) by_id[row.id].push_back(&row);
    for (const auto& ecu : vehicle_.ecus) {
      const auto& rows = by_id[ecu.id];
      for (const auto& field : ecu.signals) {
        double total_step = 0;
        for (std::size_t i = 1; i < rows.size(); ++i) {
          total_step += std::abs(raw(field, *rows[i]) - raw(field, *rows[i - 1]));
        }
        const double range = field.width == 2 ? 65'535.0 : 255.0;
        const double mean_step = total_step / static_cast<double>(rows.size() - 1);
        EXPECT_LT(mean_step, range * 0.05)
            << "ECU " << std::hex << ecu.id << " byte " << std::dec << int{field.byte};
        moving_fields += total_step > 0;
      }
    }
  }
  EXPECT_GT(moving_fields, 20U);
}

TEST_F(SyntheticTraffic, DosFloodsIdZeroInSeveralBursts) {
  const auto files = files_of_type("DoS");
  ASSERT_EQ(files.size(), 2U);
  const auto ids = ecu_ids(vehicle_);
  EXPECT_GT(*ids.begin(), 0U) << "ID 0 outranks every ECU";
  for (const auto* file : files) {
    SCOPED_TRACE(file->relative_path.string());
    const auto& rows = parsed(*file).rows;
    EXPECT_GT(file->attack_frames, file->frames / 20);
    EXPECT_LT(file->attack_frames, file->frames / 2) << "normal traffic continues around attacks";
    for (const auto& row : rows) {
      if (row.label == 1) {
        ASSERT_EQ(row.id, 0U);
      } else {
        ASSERT_TRUE(ids.count(row.id)) << "normal frames come from the ECUs";
      }
    }
    const auto bursts = attack_bursts(rows);
    EXPECT_GE(bursts.size(), 2U);
    for (const auto& burst : bursts) {
      ASSERT_GE(burst.size(), 10U);
      // A flood: far more frames per second than any ECU sends (fastest period is 10 ms).
      const std::int64_t span = burst.back()->time_us - burst.front()->time_us;
      EXPECT_LT(span / static_cast<std::int64_t>(burst.size() - 1), 1'000);
    }
  }
}

TEST_F(SyntheticTraffic, FuzzingInjectsRandomIdsAndPayloads) {
  const auto files = files_of_type("fuzzing");
  ASSERT_EQ(files.size(), 2U);
  const auto ids = ecu_ids(vehicle_);
  for (const auto* file : files) {
    SCOPED_TRACE(file->relative_path.string());
    std::set<std::uint32_t> attack_ids;
    std::set<std::size_t> dlcs;
    std::size_t foreign = 0;
    for (const auto& row : parsed(*file).rows) {
      if (row.label != 1) continue;
      ASSERT_LE(row.id, 0x7FFU);
      attack_ids.insert(row.id);
      dlcs.insert(row.data.size());
      foreign += ids.count(row.id) == 0;
    }
    EXPECT_GT(foreign, 0U) << "fuzzing uses IDs the car never sends";
    EXPECT_GT(attack_ids.size(), 100U);
    EXPECT_GT(dlcs.size(), 3U);
    EXPECT_GE(attack_bursts(parsed(*file).rows).size(), 2U);
  }
}

TEST_F(SyntheticTraffic, SpoofingForgesOneRealIdAtAHighRate) {
  const auto files = files_of_type("spoofing");
  ASSERT_EQ(files.size(), 1U);
  const auto& rows = parsed(*files[0]).rows;
  std::set<std::uint32_t> attack_ids;
  for (const auto& row : rows) {
    if (row.label == 1) attack_ids.insert(row.id);
  }
  ASSERT_EQ(attack_ids.size(), 1U);
  const std::uint32_t target = *attack_ids.begin();
  const auto ecu = std::find_if(vehicle_.ecus.begin(), vehicle_.ecus.end(),
                                [&](const EcuSpec& e) { return e.id == target; });
  ASSERT_NE(ecu, vehicle_.ecus.end()) << "spoofing reuses an ECU's ID";

  const auto bursts = attack_bursts(rows);
  ASSERT_GE(bursts.size(), 2U);
  for (const auto& burst : bursts) {
    ASSERT_GE(burst.size(), 10U);
    const std::int64_t span = burst.back()->time_us - burst.front()->time_us;
    EXPECT_LT(span / static_cast<std::int64_t>(burst.size() - 1), ecu->period_us / 4)
        << "injected faster than the real ECU sends";
    // One forged payload per burst, and the real ECU keeps sending beside it.
    std::set<std::uint64_t> payloads;
    for (const Row* row : burst) payloads.insert(packed(row->data));
    EXPECT_EQ(payloads.size(), 1U);
    const auto real_frames = std::count_if(rows.begin(), rows.end(), [&](const Row& r) {
      return r.label == 0 && r.id == target && r.time_us >= burst.front()->time_us &&
             r.time_us <= burst.back()->time_us;
    });
    EXPECT_GE(real_frames, span / ecu->period_us / 2);
  }
}

TEST_F(SyntheticTraffic, SpoofingIsAbsentFromTraining) {
  std::set<std::string> train_types, test_types;
  for (const auto& file : summary_.files) {
    const std::string split = file.relative_path.begin()->string();
    ASSERT_TRUE(split.rfind("train_", 0) == 0 || split.rfind("test_", 0) == 0) << split;
    (split.rfind("train_", 0) == 0 ? train_types : test_types).insert(type_of(file.relative_path));
  }
  EXPECT_EQ(train_types, (std::set<std::string>{"attack-free", "DoS", "fuzzing"}));
  EXPECT_TRUE(test_types.count("spoofing"));
}

TEST_F(SyntheticTraffic, LeavesNoStagingDirectory) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir_->path()))
    names.push_back(entry.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"dataset"});
}

TEST(SyntheticDataset, SameSeedGivesByteIdenticalFilesAndOtherSeedsDiffer) {
  testing::TempDir dir;
  generate_synthetic_dataset(dir / "a", {.seed = 11, .total_frames = 20'000}, false);
  generate_synthetic_dataset(dir / "b", {.seed = 11, .total_frames = 20'000}, false);
  generate_synthetic_dataset(dir / "c", {.seed = 12, .total_frames = 20'000}, false);
  const auto files = files_under(dir / "a");
  ASSERT_EQ(files, files_under(dir / "b"));
  ASSERT_EQ(files, files_under(dir / "c"));
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    EXPECT_EQ(read_bytes(dir / "a" / file), read_bytes(dir / "b" / file));
    EXPECT_NE(read_bytes(dir / "a" / file), read_bytes(dir / "c" / file));
  }
}

TEST(SyntheticDataset, FrameTotalIsExactForAnyCount) {
  testing::TempDir dir;
  const auto summary =
      generate_synthetic_dataset(dir / "d", {.seed = 3, .total_frames = 12'347}, false);
  std::uint64_t total = 0;
  for (const auto& file : summary.files) {
    EXPECT_EQ(parse_file(dir / "d" / file.relative_path).rows.size(), file.frames);
    EXPECT_GT(file.frames, 0U);
    if (file.attack_type != "attack-free") {
      EXPECT_GT(file.attack_frames, 0U) << file.relative_path;
    }
    total += file.frames;
  }
  EXPECT_EQ(total, 12'347U);
}

// The row number (0-based, header not counted) of a file's first attack frame; -1: none.
std::int64_t first_attack_row(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  for (std::int64_t row = 0; std::getline(in, line); ++row) {
    if (!line.empty() && line.back() == '1') return row;
  }
  return -1;
}

// Real captures begin with normal driving (every hcrl_sa and set_01 test file: 254 or more
// windows of 100 frames before the first attack), and label-free adaptation reads the first 200
// windows of each test file as that file's normal traffic. The default dataset must not defeat
// it with attacks no real capture has there.
TEST(SyntheticDataset, AttackFilesOfTheDefaultDatasetBeginWithNormalDriving) {
  testing::TempDir dir;
  const auto summary = generate_synthetic_dataset(dir / "d", {}, false);
  std::size_t attack_files = 0;
  for (const auto& file : summary.files) {
    if (file.attack_type == "attack-free") continue;
    SCOPED_TRACE(file.relative_path.string());
    ++attack_files;
    const auto first = first_attack_row(dir / "d" / file.relative_path);
    EXPECT_GE(first, 20'000) << "the first 200 windows hold no attack";
    EXPECT_LE(first, static_cast<std::int64_t>(file.frames * 6 / 10)) << "attacks follow";
    EXPECT_GT(file.attack_frames, file.frames / 20);
  }
  EXPECT_EQ(attack_files, 5U);
}

TEST(SyntheticDataset, RejectsTooFewFrames) {
  testing::TempDir dir;
  EXPECT_THROW(generate_synthetic_dataset(
                   dir / "d", {.seed = 1, .total_frames = kMinSyntheticFrames - 1}, false),
               std::invalid_argument);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(SyntheticDataset, ExistingDirectoryIsReplacedOnlyWithOverwrite) {
  testing::TempDir dir;
  const fs::path root = dir / "d";
  generate_synthetic_dataset(root, {.seed = 1, .total_frames = 5'000}, false);
  const std::string first = read_bytes(root / "train_01_attack_free/attack-free-1.csv");

  try {
    generate_synthetic_dataset(root, {.seed = 2, .total_frames = 5'000}, false);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), root.string() + " exists (use --force to replace it)");
  }
  EXPECT_EQ(read_bytes(root / "train_01_attack_free/attack-free-1.csv"), first);

  generate_synthetic_dataset(root, {.seed = 2, .total_frames = 5'000}, true);
  EXPECT_NE(read_bytes(root / "train_01_attack_free/attack-free-1.csv"), first);
  EXPECT_NE(read_bytes(root / "synthetic.json").find("\"seed\": 2"), std::string::npos);

  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir.path()))
    names.push_back(entry.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"d"}) << "no staging or old copy left behind";
}

TEST(SyntheticDataset, OverwriteRefusesADirectoryThatIsNotADataset) {
  testing::TempDir dir;
  testing::write_text_file(dir / "d" / "notes.txt", "keep me");
  EXPECT_THROW(generate_synthetic_dataset(dir / "d", {.seed = 1, .total_frames = 5'000}, true),
               std::runtime_error);
  EXPECT_TRUE(fs::exists(dir / "d" / "notes.txt"));
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir.path()))
    names.push_back(entry.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"d"});

  fs::create_directory(dir / "empty");
  generate_synthetic_dataset(dir / "empty", {.seed = 1, .total_frames = 5'000}, true);
  EXPECT_TRUE(fs::exists(dir / "empty" / "synthetic.json"));
}

TEST(SyntheticDataset, OnlyWhatTheGeneratorWroteIsRecognised) {
  testing::TempDir dir;
  generate_synthetic_dataset(dir / "d", {.seed = 1, .total_frames = 5'000}, false);
  const auto why_not = synthetic_dataset_kind().why_not_ours;
  EXPECT_EQ(why_not(dir / "d"), "");
  testing::write_text_file(dir / "d" / "train_01_attack_free" / "notes.txt", "mine");
  EXPECT_NE(why_not(dir / "d").find("'train_01_attack_free/notes.txt'"), std::string::npos)
      << why_not(dir / "d");

  // Someone else's synthetic.json: another generator's, an empty one, one that is not JSON.
  for (const auto& manifest : {std::string(R"({"generator": "faker", "files": []})"), std::string(),
                               std::string("{\"generator\": \"headroom generate\"")}) {
    testing::write_text_file(dir / "other" / "synthetic.json", manifest);
    EXPECT_NE(why_not(dir / "other").find("is not one `headroom generate` wrote"),
              std::string::npos)
        << manifest;
  }
}

// `headroom run` tells a user whose data/synthetic predates the lead-in, or was generated with
// another seed or size than the run asks for, to regenerate it.
TEST(SyntheticDataset, TheManifestTellsHowAndByWhichLayoutADatasetWasGenerated) {
  testing::TempDir dir;
  generate_synthetic_dataset(dir / "d", {.seed = 1, .total_frames = 5'000}, false);
  const auto generated = generated_dataset(dir / "d");
  ASSERT_TRUE(generated.has_value());
  EXPECT_EQ(generated->layout_revision, kSyntheticLayoutRevision);
  EXPECT_EQ(generated->options.seed, 1U);
  EXPECT_EQ(generated->options.total_frames, 5'000U);

  testing::write_text_file(dir / "old" / "synthetic.json",
                           R"({"generator": "headroom generate", "format": "can-train-and-test",)"
                           R"( "files": []})");
  ASSERT_TRUE(generated_dataset(dir / "old").has_value());
  EXPECT_EQ(generated_dataset(dir / "old")->layout_revision, 1);
  testing::write_text_file(dir / "other" / "synthetic.json", R"({"generator": "faker"})");
  EXPECT_FALSE(generated_dataset(dir / "other").has_value());
  EXPECT_FALSE(generated_dataset(dir / "missing").has_value());
}

TEST(SyntheticDataset, RemovesStagingLeftByAKilledRun) {
  testing::TempDir dir;
  // A run killed while writing its first file: its staging directory stays behind.
  const pid_t pid = fork();
  if (pid == 0) {
    util::StagedDirectory staged(dir / "d", false, synthetic_dataset_kind());
    testing::write_text_file(staged.staging() / "train_01_attack_free" / "attack-free-1.csv",
                             "partial");
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
  // A name that only looks like a temporary is someone else's (this used to be removed).
  testing::write_text_file(dir / "d.tmp-999999999" / "train_01_attack_free" / "attack-free-1.csv",
                           "mine");
  generate_synthetic_dataset(dir / "d", {.seed = 1, .total_frames = 5'000}, false);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir.path()))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"d", "d.tmp-999999999"}));
  EXPECT_TRUE(fs::exists(dir / "d" / "synthetic.json"));
}

}  // namespace
}  // namespace headroom::can
