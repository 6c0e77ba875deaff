// The layout of a CAN dataset on disk: a root holding split directories, `train_*` for training
// traffic and `test_*` for test conditions, each holding CAN log files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace headroom::dataset {

enum class SplitRole : std::uint8_t { kTrain = 0, kTest = 1 };

struct SplitDirectory {
  std::string name;  // e.g. "train_01_attack_free", "test_03_known_vehicle_unknown_attack"
  SplitRole role;
};

// Where a file's attack type comes from.
enum class AttackTypeSource : std::uint8_t {
  kFileName,   // the file's name: attack_type_from_file_name
  kDirectory,  // the directory holding the file inside its split: attack_type_from_directory_name
               // (a file directly in the split directory falls back to its file name)
};

struct DatasetFile {
  std::filesystem::path path;  // absolute, through the links the scan followed
  std::string relative_path;   // to the dataset root, '/'-separated
  std::uint16_t split = 0;     // index into DatasetLayout::splits
  // As ScanOptions::attack_type_from names it. Preprocessing renames a file that holds no attack
  // frame kAttackFreeType, whatever its name says.
  std::string attack_type;
  std::uint64_t size_bytes = 0;
};

// The attack type of traffic without attacks.
inline constexpr std::string_view kAttackFreeType = "attack-free";

// An entry inside a split that the scan did not read, and why: a link cycle, a second link to a
// directory already read, a broken link, something that is not a regular file (a FIFO, a device
// such as a link to /dev/zero, a socket), a file that is not a CAN log by its name (a compressed
// `.csv.gz`, a README); or a split directory with no file to read (its relative_path is the
// split's name). Reasons quote paths escaped (util::printable_path).
struct SkippedEntry {
  std::string relative_path;  // to the dataset root, '/'-separated
  std::string reason;
};

struct DatasetLayout {
  std::filesystem::path root;
  std::vector<SplitDirectory> splits;  // train_* first, then test_*, each sorted by name
  std::vector<DatasetFile> files;      // grouped by split in that order, sorted by path within
  std::size_t train_file_count = 0;    // files[0, train_file_count) are training files
  std::vector<std::string> excluded;   // relative paths left out by the exclusion patterns
  std::vector<SkippedEntry> skipped;   // in scan order (splits in order, names sorted)
};

struct ScanOptions {
  // Files whose name contains one of these (case-insensitive) are left out, as upstream does.
  std::vector<std::string> exclude_substrings = {"suppress", "masquerade"};
  AttackTypeSource attack_type_from = AttackTypeSource::kFileName;
};

// Lists the CAN log files of a dataset, recursively inside each split directory. Links are
// followed, to files and to directories alike; a directory reached a second time within one split
// (a link cycle, or two links to one directory) is read once and the repeat listed in `skipped`,
// as is every other entry not read (SkippedEntry) and every split without a file to read. Entries
// are visited in name order, so the result does not depend on the file system. Throws
// std::runtime_error with a one-line message when the root is missing or not a directory, or when
// there is no training file.
DatasetLayout scan_dataset(const std::filesystem::path& root, const ScanOptions& options = {});

// The lower-cased stem without the recording's suffix: a trailing number after '-' or '_'
// ("DoS-1", "DoS_1" -> "dos"; "targeted_payload_fuzzing-2" -> "targeted_payload_fuzzing"), else
// the part after the last '-' (a vehicle: "DoS-sonata" -> "dos", "attack-free-kia" ->
// "attack-free"); a stem with neither stays whole ("gear_dataset").
std::string attack_type_from_file_name(const std::filesystem::path& file);

// A directory named after its attack: lower-cased, a trailing number after '-' or '_' dropped
// ("DoS_2" -> "dos", "attack-free" -> "attack-free").
std::string attack_type_from_directory_name(std::string_view name);

}  // namespace headroom::dataset
