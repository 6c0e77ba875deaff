// A store part: what one shard of a sharded preprocess writes (`headroom preprocess --shard I/N`),
// and what the assembly reads to build the store one process would have built.
//
// A part needs no vocabulary (only known once every training file is read), so it keys every
// file's graphs by raw CAN ID and records per file what the assembly needs to do the rest: its
// counts, its frame hash (duplicate detection), its CAN IDs (the vocabulary, and whether a test
// file has IDs outside it), and, for test files, the frames (windows with IDs outside the
// vocabulary are rebuilt from them). Layout of `<STORE>.parts/<I>-of-<N>/`:
//   part.json                 this manifest (written last: a part without it is not one)
//   file-<k>.graphs ...       the segment of layout file k (store/graph_segment_writer.hpp)
//   file-<k>.frames           test file k's frames (window_frames.hpp)
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "headroom/dataset/dataset_layout.hpp"
#include "headroom/graph/window_graph.hpp"
#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/preprocess/shard_plan.hpp"
#include "headroom/store/graph_segment_writer.hpp"
#include "headroom/util/directory_ownership.hpp"

namespace headroom::preprocess {

inline constexpr const char* kPartFormatName = "headroom-store-part";
// 2: every file of a part has its checksum in the manifest (version 1 parts had none).
inline constexpr int kPartFormatVersion = 2;
inline constexpr const char* kPartManifestFileName = "part.json";
inline constexpr const char* kFramesFileSuffix = ".frames";  // file-<k>.frames

// What a part records of one file it read.
struct PartFileRecord {
  std::size_t file = 0;  // index into the dataset layout's files
  std::string path;      // relative to the dataset root
  std::uint64_t rows = 0;
  std::uint64_t attack_rows = 0;
  std::uint64_t skipped_rows = 0;
  std::uint64_t graphs = 0;
  std::uint64_t nodes = 0;
  std::uint64_t edges = 0;
  std::uint64_t frames_hash = 0;  // FileGraphResult::frames_hash
  // Sorted unique CAN IDs: a training file's as --vocabulary-from says, every frame's for a test
  // file.
  std::vector<std::uint32_t> can_ids;
  bool has_frames = false;  // file-<k>.frames holds the frames (test files)
  std::size_t node_feature_count = graph::kNodeFeatureCount;  // per node row of its segment
  // XXH3-64 of each of its files, by suffix: the segment's (store::kSegmentFileSuffixes) and,
  // with has_frames, ".frames". The assembly verifies them all before it reads any.
  std::map<std::string, std::uint64_t> checksums;
};

// The build settings that decide a store's content, by the flag (or fact) that sets each, as
// canonical JSON: "--window" -> "100", "dataset files" -> the scanned files with their sizes.
// Parts can be assembled only when all of them and the assembling command agree on every entry.
// The dataset's path is not among them: nodes may see it at different paths.
using PartSettings = std::map<std::string, std::string>;
inline constexpr const char* kDatasetFilesSetting = "dataset files";

PartSettings part_settings(const dataset::DatasetLayout& layout, const PreprocessOptions& options);

// The first entry on which `part` and `ours` differ, as "--window 50 (this command: 100)", or an
// empty string when they agree.
std::string settings_difference(const PartSettings& part, const PartSettings& ours);

struct StorePart {
  ShardSpec shard;
  std::string created_by;
  PartSettings settings;
  std::vector<PartFileRecord> files;  // ascending layout index
};

// `<store>.parts`: where the parts of the store at `store` are written.
std::filesystem::path parts_directory(const std::filesystem::path& store);
// The segment prefix (and frames file stem) of layout file `file` in part directory `part`.
std::filesystem::path part_file_prefix(const std::filesystem::path& part, std::size_t file);
// The segment of `record` in part directory `part` (raw CAN ID keys).
store::SegmentSummary part_segment(const std::filesystem::path& part, const PartFileRecord& record);
std::filesystem::path part_frames_file(const std::filesystem::path& part, std::size_t file);

// The manifest text, with its own checksum (over the compact dump without it).
std::string render_part_manifest(const StorePart& part);
// Reads `<part>/part.json`; checks format, version and checksum. Throws std::runtime_error naming
// the part directory.
StorePart read_part_manifest(const std::filesystem::path& part);

// A store part as a directory headroom owns (util/directory_ownership.hpp): a part.json that
// read_part_manifest accepts and nothing else but `file-<k>` segment and frames files.
util::DirectoryKind store_part_kind();

// Checks every file of `record` in part directory `part` (of shard `shard`) against its recorded
// checksum.
// Reads each file once. Throws std::runtime_error naming the part, the file and the reason.
void verify_part_file(const std::filesystem::path& part, ShardSpec shard,
                      const PartFileRecord& record);

}  // namespace headroom::preprocess
