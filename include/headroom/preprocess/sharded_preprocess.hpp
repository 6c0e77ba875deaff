// Preprocessing across processes or nodes: `headroom preprocess DATASET --out STORE --shard I/N`
// writes the part of shard I (store_part.hpp), and `headroom preprocess DATASET --out STORE
// --assemble` builds from the N parts the store one process would have built from the dataset:
// the same array files byte for byte and the same manifest (docs/distributed.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/preprocess/shard_plan.hpp"

namespace headroom::preprocess {

struct ShardReport {
  ShardSpec shard;
  std::filesystem::path part;     // the part directory written
  std::vector<FileReport> files;  // the shard's files, in layout order
  std::uint64_t rows = 0;
  std::uint64_t skipped_rows = 0;
  std::uint64_t graphs = 0;
  double seconds = 0.0;
};

// Reads the files of `shard` (shard_plan.hpp: by bytes, from the layout alone) into the part
// `<store>.parts/I-of-N`, written in a staging directory and renamed into place when complete.
// Checks before reading anything what the assembly would refuse: the store and its parts outside
// the dataset; an existing store needs `options.overwrite` and must be a store headroom wrote; an
// existing part likewise. A shard with no files writes an empty part (the assembly needs all N).
// Throws with a one-line message on any error, leaving no part behind.
ShardReport preprocess_shard(const std::filesystem::path& dataset_root,
                             const std::filesystem::path& store_path,
                             const PreprocessOptions& options, ShardSpec shard);

struct AssemblyReport {
  PreprocessReport store;             // as preprocess_dataset reports it (seconds: the assembly's)
  std::uint32_t parts = 0;            // N
  std::size_t rekeyed_files = 0;      // test files with IDs outside the vocabulary
  std::uint64_t rebuilt_windows = 0;  // their windows rebuilt from the part's frames
};

// Builds the store at `store_path` from the parts in `<store>.parts`, equal to what
// preprocess_dataset(dataset_root, store_path, options) builds. `options` must be those the shards
// ran with (threads, progress and overwrite aside): the dataset is scanned again and every part's
// settings (store_part.hpp: PartSettings) must equal this command's. Throws std::runtime_error,
// before writing anything, naming what is wrong: no parts, missing parts, parts of different N, a
// part with other settings (and the first difference) or other files, an incomplete part. The
// store is written atomically, as by preprocess_dataset; the parts are removed once it is in place.
// Uses options.threads threads to re-key test files.
AssemblyReport assemble_store(const std::filesystem::path& dataset_root,
                              const std::filesystem::path& store_path,
                              const PreprocessOptions& options);

}  // namespace headroom::preprocess
