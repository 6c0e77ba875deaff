// `headroom preprocess`: a CAN dataset directory -> one graph store, in parallel over files and
// streaming throughout (memory is bounded by threads x a few MiB, whatever the dataset size).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "headroom/can/log_format.hpp"
#include "headroom/dataset/dataset_layout.hpp"
#include "headroom/graph/node_features.hpp"
#include "headroom/graph/window_config.hpp"
#include "headroom/util/exclusive_lock.hpp"

namespace headroom::preprocess {

struct PreprocessOptions {
  graph::WindowConfig window;
  unsigned threads = 0;  // 0: all hardware threads
  can::ReaderOptions reader;
  dataset::ScanOptions scan;
  double validation_fraction = 0.2;
  std::string validation_by = "graphs";  // or "files" (store::StoreMetadata::validation_by)
  std::uint64_t seed = 42;               // of the validation split
  bool overwrite = false;
  // Keep training files whose frames repeat an earlier training file's (by default the later
  // copies are left out: identical windows would land in both training and validation).
  bool keep_duplicate_files = false;
  // Where the CAN-ID vocabulary comes from: "all" training frames (upstream), or "normal" ones
  // only, so that IDs that appear only in attacks (fuzzing injects thousands of random ones) do
  // not become vocabulary entries (store::StoreMetadata::vocabulary_from).
  std::string vocabulary_from = "all";
  // Node identity and optional feature groups (store::StoreMetadata::node_features).
  graph::NodeFeatureOptions features;
  int progress = -1;  // progress bar: -1 when stderr is a terminal, 0 off, 1 on
  // When another process is building the same store: fail at once naming it, or wait for it
  // (--wait-for-lock; store::StoreBuilder).
  util::WhenLocked when_locked = util::WhenLocked::kFail;
};

struct FileReport {
  std::string path;  // relative to the dataset root
  std::uint64_t rows = 0;
  std::uint64_t skipped_rows = 0;
  std::uint64_t graphs = 0;
};

// A file whose frames are those of another file (same timestamps, IDs, payloads and labels).
struct DuplicateFile {
  std::string path;       // relative to the dataset root
  std::string same_as;    // the earlier file it repeats
  bool left_out = false;  // a training file left out (a test file is only reported)
};

// A file whose name (or directory) gives an attack type but whose frames hold no attack: it is
// stored as dataset::kAttackFreeType.
struct AttackFreeFile {
  std::string path;        // relative to the dataset root
  std::string named_type;  // what the layout named it
};

struct PreprocessReport {
  std::vector<FileReport> files;
  std::vector<std::string> excluded;
  std::vector<dataset::SkippedEntry> skipped_entries;  // links the scan did not follow
  std::vector<AttackFreeFile> attack_free_files;
  std::vector<DuplicateFile> duplicates;
  std::uint64_t rows = 0;
  std::uint64_t skipped_rows = 0;
  std::uint64_t graphs = 0;
  std::size_t vocabulary_size = 0;
  double seconds = 0.0;
};

// Builds the store at `store_path` from the dataset at `dataset_root`. On any error (bad row,
// empty file, missing directory, no training files, unreadable Parquet) throws with a one-line
// message and leaves no store behind (nor replaces an existing one).
PreprocessReport preprocess_dataset(const std::filesystem::path& dataset_root,
                                    const std::filesystem::path& store_path,
                                    const PreprocessOptions& options);

}  // namespace headroom::preprocess
