// The readers on the real CAN data under ../shared/data (skipped when it is absent).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "headroom/can/log_format.hpp"
#include "headroom/can/parquet_frame_reader.hpp"
#include "test_support.hpp"

namespace headroom::can {
namespace {

using headroom::testing::shared_data_dir;

struct FileCounts {
  const char* file;  // under can/
  std::uint64_t rows;
  std::uint64_t attack_rows;
};

// The row-count table of ../shared/data/README.md.
constexpr FileCounts kParquetCounts[] = {
    {"hcrl_sa/test_01_known_vehicle_known_attack/DoS-sonata.parquet", 149547, 32422},
    {"hcrl_sa/test_01_known_vehicle_known_attack/fuzzing-kia.parquet", 249990, 39812},
    {"hcrl_sa/test_02_unknown_vehicle_known_attack/DoS-spark.parquet", 120570, 22587},
    {"hcrl_sa/test_02_unknown_vehicle_known_attack/fuzzing-Spark.parquet", 65665, 5812},
    {"hcrl_sa/test_03_known_vehicle_unknown_attack/malfunction-kia.parquet", 173436, 7401},
    {"hcrl_sa/test_03_known_vehicle_unknown_attack/malfunction-sonata.parquet", 132651, 15974},
    {"hcrl_sa/test_04_unknown_vehicle_unknown_attack/malfunction-spark.parquet", 79787, 8047},
    {"hcrl_sa/train_01_attack_free/attack-free-kia.parquet", 192516, 0},
    {"hcrl_sa/train_01_attack_free/attack-free-sonata.parquet", 117173, 0},
    {"hcrl_sa/train_02_with_attacks/DoS-kia.parquet", 181901, 33141},
    {"hcrl_sa/train_02_with_attacks/attack-free-kia.parquet", 192516, 0},
    {"hcrl_sa/train_02_with_attacks/attack-free-sonata.parquet", 117173, 0},
    {"hcrl_sa/train_02_with_attacks/fuzzing-sonata.parquet", 135670, 18118},
    {"set_01/test_01_known_vehicle_known_attack/DoS-3.parquet", 154255, 19223},
    {"set_01/test_04_unknown_vehicle_unknown_attack/systematic-4.parquet", 330614, 922},
    {"set_01/train_01_attack_free/accessory-1.parquet", 207704, 0},
    {"set_01/train_01_attack_free/accessory-2.parquet", 226166, 0},
    {"set_01/train_02_with_attacks/DoS-1.parquet", 90169, 9139},
    {"set_01/train_02_with_attacks/DoS-2.parquet", 311045, 25954},
    {"set_01/train_02_with_attacks/accessory-1.parquet", 207704, 0},
    {"set_01/train_02_with_attacks/accessory-2.parquet", 226166, 0},
    {"set_01/train_02_with_attacks/targeted_payload_fuzzing-2.parquet", 300936, 936},
};

// Each CSV under can-csv/ and its Parquet twin under can/.
constexpr const char* kCsvTwins[] = {
    "hcrl_sa/test_02_unknown_vehicle_known_attack/fuzzing-Spark",
    "set_01/train_02_with_attacks/DoS-1",
};

std::vector<CanFrame> read_all(FrameReader& reader) {
  std::vector<CanFrame> all;
  std::vector<CanFrame> buffer(8192);
  while (const std::size_t n = reader.read(buffer)) {
    all.insert(all.end(), buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(n));
  }
  return all;
}

TEST(RealDataReaderTest, EveryParquetFileMatchesTheReadmeCounts) {
  HEADROOM_REQUIRE_SHARED_DATA();
  const auto root = shared_data_dir() / "can";
  std::size_t listed = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().extension() == ".parquet") ++listed;
  }
  EXPECT_EQ(listed, std::size(kParquetCounts)) << "the table is out of date with " << root;

  for (const auto& expected : kParquetCounts) {
    SCOPED_TRACE(expected.file);
    const auto file = root / expected.file;
    ASSERT_EQ(detect_format(file), LogFormat::kParquet);
    auto reader = open_frame_reader(file, ReaderOptions{});
    std::vector<CanFrame> buffer(65536);
    std::uint64_t rows = 0;
    std::uint64_t attacks = 0;
    while (const std::size_t n = reader->read(buffer)) {
      rows += n;
      for (std::size_t i = 0; i < n; ++i) {
        attacks += buffer[i].label;
        ASSERT_LE(buffer[i].dlc, kMaxPayloadBytes);
        ASSERT_LE(buffer[i].id, 0x7FFu);  // both datasets use 11-bit IDs only
      }
    }
    EXPECT_EQ(rows, expected.rows);
    EXPECT_EQ(attacks, expected.attack_rows);
    EXPECT_EQ(reader->skipped_rows(), 0u);
    EXPECT_EQ(dynamic_cast<ParquetFrameReader&>(*reader).num_rows(), expected.rows);
  }
}

TEST(RealDataReaderTest, CsvFilesEqualTheirParquetTwins) {
  HEADROOM_REQUIRE_SHARED_DATA();
  for (const char* twin : kCsvTwins) {
    SCOPED_TRACE(twin);
    const auto csv = shared_data_dir() / "can-csv" / (std::string(twin) + ".csv");
    const auto parquet = shared_data_dir() / "can" / (std::string(twin) + ".parquet");
    ASSERT_EQ(detect_format(csv), LogFormat::kCanTrainTest);
    auto csv_reader = open_frame_reader(csv, ReaderOptions{});
    auto parquet_reader = open_frame_reader(parquet, ReaderOptions{});
    const auto csv_frames = read_all(*csv_reader);
    const auto parquet_frames = read_all(*parquet_reader);
    ASSERT_EQ(csv_frames.size(), parquet_frames.size());
    EXPECT_GT(csv_frames.size(), 0u);
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < csv_frames.size() && mismatches < 5; ++i) {
      if (csv_frames[i] == parquet_frames[i]) continue;
      ++mismatches;
      ADD_FAILURE() << "frame " << i << " differs: csv id " << csv_frames[i].id << " t "
                    << csv_frames[i].timestamp_s << ", parquet id " << parquet_frames[i].id << " t "
                    << parquet_frames[i].timestamp_s;
    }
    EXPECT_EQ(csv_reader->skipped_rows(), 0u);
  }
}

}  // namespace
}  // namespace headroom::can
