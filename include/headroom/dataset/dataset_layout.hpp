// The layout of a CAN dataset on disk: a root holding split directories, `train_*` for training
// traffic and `test_*` for test conditions, each holding CAN log files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace headroom::dataset {

enum class SplitRole : std::uint8_t { kTrain = 0, kTest = 1 };

struct SplitDirectory {
  std::string name;  // e.g. "train_01_attack_free", "test_03_known_vehicle_unknown_attack"
  SplitRole role;
};

struct DatasetFile {
  std::filesystem::path path;  // absolute
  std::string relative_path;   // to the dataset root, '/'-separated
  std::uint16_t split = 0;     // index into DatasetLayout::splits
  std::string attack_type;     // from the file name, see attack_type_from_file_name
  std::uint64_t size_bytes = 0;
};

struct DatasetLayout {
  std::filesystem::path root;
  std::vector<SplitDirectory> splits;  // train_* first, then test_*, each sorted by name
  std::vector<DatasetFile> files;      // grouped by split in that order, sorted by path within
  std::size_t train_file_count = 0;    // files[0, train_file_count) are training files
  std::vector<std::string> excluded;   // relative paths left out by the exclusion patterns
};

struct ScanOptions {
  // Files whose name contains one of these (case-insensitive) are left out, as upstream does.
  std::vector<std::string> exclude_substrings = {"suppress", "masquerade"};
};

// Lists the CAN log files of a dataset (recursively inside each split directory). Throws
// std::runtime_error with a one-line message when the root is missing or not a directory, or
// when there is no training file.
DatasetLayout scan_dataset(const std::filesystem::path& root, const ScanOptions& options = {});

// "DoS-sonata.csv" -> "dos", "targeted_payload_fuzzing-2.parquet" -> "targeted_payload_fuzzing",
// "attack-free-kia.csv" -> "attack-free": the lower-cased stem up to its last '-' (the vehicle or
// capture number follows it), or the whole stem when it has no '-'.
std::string attack_type_from_file_name(const std::filesystem::path& file);

}  // namespace headroom::dataset
