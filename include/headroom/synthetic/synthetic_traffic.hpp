// `headroom generate`: writes a synthetic CAN intrusion dataset, the default data of a fresh clone.
//
// Layout under the dataset root (CSV in the can-train-and-test format,
// `timestamp,arbitration_id,data_field,attack`):
//   train_01_attack_free/attack-free-1.csv, attack-free-2.csv
//   train_02_with_attacks/DoS-1.csv, fuzzing-1.csv
//   test_01_known_vehicle_known_attack/DoS-2.csv, fuzzing-2.csv
//   test_02_known_vehicle_unknown_attack/spoofing-1.csv   (spoofing never appears in training)
//   synthetic.json                                        (seed, file summaries, the ECU table)
// Every file is traffic of the same car (make_synthetic_vehicle(seed)) on a simulated 500 kbit/s
// bus with priority arbitration; attack files hold several attack intervals between stretches of
// normal traffic. The output is a pure function of (seed, total_frames): byte-identical across
// runs and platforms.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/util/directory_ownership.hpp"

namespace headroom::synthetic {

inline constexpr std::uint64_t kMinSyntheticFrames = 1'000;
inline constexpr std::string_view kSyntheticManifestName = "synthetic.json";
// What the generator writes, as synthetic.json's "layout_revision" says (absent: 1). 2: attack
// files begin with a lead-in of normal driving, as real captures do.
inline constexpr int kSyntheticLayoutRevision = 2;

struct SyntheticDatasetOptions {
  std::uint64_t seed = 7;
  // Frames in the whole dataset (at least kMinSyntheticFrames). Each file gets a fixed share; the
  // last file takes the rounding remainder, so the files add up to exactly this count.
  std::uint64_t total_frames = 400'000;
};

struct SyntheticFileSummary {
  std::filesystem::path relative_path;  // e.g. train_02_with_attacks/DoS-1.csv
  std::uint64_t frames = 0;
  std::uint64_t attack_frames = 0;  // rows labelled 1
  std::string attack_type;          // "attack-free", "DoS", "fuzzing" or "spoofing"
};

struct SyntheticDatasetSummary {
  std::vector<SyntheticFileSummary> files;  // in the order they were written
  std::size_t ecu_count = 0;
};

// Writes the dataset to `root`, atomically: everything goes to a sibling staging directory
// (util/staged_directory.hpp), every file is fsynced, and only a complete dataset is renamed to
// `root`, so an interrupted run never leaves a partial `root` (at most a stale staging directory,
// which a later run removes). Memory use is bounded (one write buffer) whatever total_frames is.
//
// If `root` exists: without `overwrite`, throws std::runtime_error("<root> exists (use --force to
// replace it)"); with `overwrite`, the old directory is replaced once the new one is complete, but
// only if it is empty or synthetic_dataset_kind() recognises it as a generated dataset --
// anything else is refused with std::runtime_error rather than deleted. Throws
// std::invalid_argument when total_frames < kMinSyntheticFrames, std::runtime_error before
// anything is created when the file system holding `root` has less room free than the dataset
// needs (its rows measured on this vehicle's traffic, times total_frames), and
// std::filesystem::filesystem_error / std::runtime_error on I/O failure (the staging directory is
// removed).
//
// Thread-safe for distinct roots; concurrent runs on the same root do not corrupt it (one wins).
SyntheticDatasetSummary generate_synthetic_dataset(const std::filesystem::path& root,
                                                   const SyntheticDatasetOptions& options,
                                                   bool overwrite);

// The mean bytes a frame takes in the CSV files of the dataset of `seed`, measured on a stretch of
// its vehicle's traffic: what generate_synthetic_dataset checks the free space against.
double synthetic_bytes_per_frame(std::uint64_t seed);

// A generated dataset as a directory headroom owns (util/directory_ownership.hpp): a
// synthetic.json that parses and names "headroom generate" as its generator and the
// can-train-and-test format, and nothing else but the split directories and CSV files of the
// layout above. Someone else's synthetic.json, or a dataset a user added files to, is not one.
util::DirectoryKind synthetic_dataset_kind();

// What synthetic.json says of a generated dataset: how it was generated and by which layout.
struct GeneratedDataset {
  SyntheticDatasetOptions options;
  int layout_revision = 1;  // 1 for a synthetic.json without one
};
// The dataset under `root` as its synthetic.json describes it; nullopt when `root` has no
// synthetic.json that `headroom generate` wrote. Reads the manifest only.
std::optional<GeneratedDataset> generated_dataset(const std::filesystem::path& root);

}  // namespace headroom::synthetic
