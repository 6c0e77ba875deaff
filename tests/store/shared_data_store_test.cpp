// Preprocessing the real datasets in ../shared/data (skipped when absent): graph counts per file
// match the counts measured on those files, and CSV and Parquet twins give identical stores.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/store/graph_store.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

struct Expected {
  std::uint64_t rows;
  std::uint64_t attack_rows;
  std::uint64_t graphs;
};

// From ../shared/data/README.md (W = S = 100).
const std::map<std::string, Expected>& expected_files() {
  static const std::map<std::string, Expected> table = {
      {"hcrl_sa/test_01_known_vehicle_known_attack/DoS-sonata.parquet", {149547, 32422, 1495}},
      {"hcrl_sa/test_01_known_vehicle_known_attack/fuzzing-kia.parquet", {249990, 39812, 2499}},
      {"hcrl_sa/test_02_unknown_vehicle_known_attack/DoS-spark.parquet", {120570, 22587, 1205}},
      {"hcrl_sa/test_02_unknown_vehicle_known_attack/fuzzing-Spark.parquet", {65665, 5812, 656}},
      {"hcrl_sa/test_03_known_vehicle_unknown_attack/malfunction-kia.parquet",
       {173436, 7401, 1734}},
      {"hcrl_sa/test_03_known_vehicle_unknown_attack/malfunction-sonata.parquet",
       {132651, 15974, 1326}},
      {"hcrl_sa/test_04_unknown_vehicle_unknown_attack/malfunction-spark.parquet",
       {79787, 8047, 797}},
      {"hcrl_sa/train_01_attack_free/attack-free-kia.parquet", {192516, 0, 1925}},
      {"hcrl_sa/train_01_attack_free/attack-free-sonata.parquet", {117173, 0, 1171}},
      {"hcrl_sa/train_02_with_attacks/DoS-kia.parquet", {181901, 33141, 1819}},
      {"hcrl_sa/train_02_with_attacks/attack-free-kia.parquet", {192516, 0, 1925}},
      {"hcrl_sa/train_02_with_attacks/attack-free-sonata.parquet", {117173, 0, 1171}},
      {"hcrl_sa/train_02_with_attacks/fuzzing-sonata.parquet", {135670, 18118, 1356}},
      {"set_01/test_01_known_vehicle_known_attack/DoS-3.parquet", {154255, 19223, 1542}},
      {"set_01/test_04_unknown_vehicle_unknown_attack/systematic-4.parquet", {330614, 922, 3306}},
      {"set_01/train_01_attack_free/accessory-1.parquet", {207704, 0, 2077}},
      {"set_01/train_01_attack_free/accessory-2.parquet", {226166, 0, 2261}},
      {"set_01/train_02_with_attacks/DoS-1.parquet", {90169, 9139, 901}},
      {"set_01/train_02_with_attacks/DoS-2.parquet", {311045, 25954, 3110}},
      {"set_01/train_02_with_attacks/accessory-1.parquet", {207704, 0, 2077}},
      {"set_01/train_02_with_attacks/accessory-2.parquet", {226166, 0, 2261}},
      {"set_01/train_02_with_attacks/targeted_payload_fuzzing-2.parquet", {300936, 936, 3009}},
  };
  return table;
}

// `attack_types`: the store's attack types, as preprocessing names them (a file without attack
// frames is attack-free whatever its name).
void expect_dataset_counts(const std::string& dataset,
                           const std::vector<std::string>& attack_types) {
  testing::TempDir dir;
  preprocess::PreprocessOptions options;
  options.progress = 0;
  options.keep_duplicate_files = true;  // every file of the table, twins included
  const auto root = testing::shared_data_dir() / "can" / dataset;
  preprocess::preprocess_dataset(root, dir / "store", options);
  const auto store = store::GraphStore::open(dir / "store", store::StoreVerification::kFull);
  const auto& files = store.metadata().files;
  std::size_t checked = 0;
  std::uint64_t graphs = 0;
  for (const auto& file : files) {
    const auto it = expected_files().find(dataset + "/" + file.path);
    ASSERT_NE(it, expected_files().end()) << file.path;
    EXPECT_EQ(file.rows, it->second.rows) << file.path;
    EXPECT_EQ(file.attack_rows, it->second.attack_rows) << file.path;
    EXPECT_EQ(file.graphs, it->second.graphs) << file.path;
    EXPECT_EQ(file.first_graph, graphs) << file.path;
    EXPECT_EQ(store.metadata().attack_types.at(file.attack_type) == "attack-free",
              it->second.attack_rows == 0)
        << file.path;
    graphs += file.graphs;
    ++checked;
  }
  EXPECT_EQ(store.num_graphs(), graphs);
  std::size_t expected_count = 0;
  for (const auto& [path, e] : expected_files())
    expected_count += path.rfind(dataset + "/", 0) == 0;
  EXPECT_EQ(checked, expected_count);
  EXPECT_EQ(store.metadata().attack_types, attack_types);
  // Every training graph is in exactly one of train/validation; test graphs are the rest.
  EXPECT_EQ(store.train_ids().size() + store.validation_ids().size() + store.test_ids().size(),
            graphs);
}

TEST(SharedDataStore, HcrlSaGraphCountsMatchTheMeasuredTable) {
  HEADROOM_REQUIRE_SHARED_DATA();
  expect_dataset_counts("hcrl_sa", {"attack-free", "dos", "fuzzing", "malfunction"});
}

TEST(SharedDataStore, Set01GraphCountsMatchTheMeasuredTable) {
  HEADROOM_REQUIRE_SHARED_DATA();
  // accessory-1/-2 are drives without attacks: attack-free, not an attack type "accessory".
  expect_dataset_counts("set_01", {"attack-free", "dos", "systematic", "targeted_payload_fuzzing"});
}

TEST(SharedDataStore, CsvAndParquetTwinsGiveIdenticalStores) {
  HEADROOM_REQUIRE_SHARED_DATA();
  const auto data = testing::shared_data_dir();
  testing::TempDir dir;
  const std::pair<const char*, const char*> twins[] = {
      {"set_01/train_02_with_attacks/DoS-1", "train_02_with_attacks/DoS-1"},
      {"hcrl_sa/test_02_unknown_vehicle_known_attack/fuzzing-Spark",
       "test_02_unknown_vehicle_known_attack/fuzzing-Spark"}};
  for (const auto& [source, target] : twins) {
    const auto csv = dir / "csv" / (std::string(target) + ".csv");
    const auto parquet = dir / "parquet" / (std::string(target) + ".parquet");
    std::filesystem::create_directories(csv.parent_path());
    std::filesystem::create_directories(parquet.parent_path());
    std::filesystem::create_symlink(data / "can-csv" / (std::string(source) + ".csv"), csv);
    std::filesystem::create_symlink(data / "can" / (std::string(source) + ".parquet"), parquet);
  }
  preprocess::PreprocessOptions options;
  options.progress = 0;
  preprocess::preprocess_dataset(dir / "csv", dir / "csv_store", options);
  preprocess::preprocess_dataset(dir / "parquet", dir / "parquet_store", options);
  const auto from_csv = store::GraphStore::open(dir / "csv_store", store::StoreVerification::kFull);
  const auto from_parquet =
      store::GraphStore::open(dir / "parquet_store", store::StoreVerification::kFull);
  ASSERT_GT(from_csv.num_graphs(), 1000U);
  EXPECT_EQ(from_csv.num_graphs(), from_parquet.num_graphs());
  EXPECT_EQ(from_csv.metadata().vocabulary, from_parquet.metadata().vocabulary);
  for (const auto& [name, record] : from_csv.metadata().arrays) {
    EXPECT_EQ(record.xxh3, from_parquet.metadata().arrays.at(name).xxh3) << name;
    EXPECT_EQ(record.bytes, from_parquet.metadata().arrays.at(name).bytes) << name;
  }
}

}  // namespace
}  // namespace headroom
