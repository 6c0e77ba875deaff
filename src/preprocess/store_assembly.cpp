// `headroom preprocess --assemble`: the N store parts into the store one process would build.
//
// What a part cannot know is the vocabulary, so the assembly does everything that depends on it,
// with the same code as preprocess_dataset (preprocess_phases.hpp): duplicate detection over every
// file's frame hash, the vocabulary from the training files' IDs, the store's metadata, the remap
// of raw-keyed segments to vocabulary indices, the validation split and the commit. Test files are
// the one difference: one process keys them by vocabulary index as it reads them, so a window
// holding IDs outside the vocabulary gets a single node for all of them, whereas the part has one
// node per ID. Such windows are rebuilt here from the frames the part keeps; every other window
// differs only in its key names, which the vocabulary maps in order.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>

#include "headroom/graph/window_graph_builder.hpp"
#include "headroom/preprocess/file_graph_stream.hpp"
#include "headroom/preprocess/sharded_preprocess.hpp"
#include "headroom/preprocess/store_part.hpp"
#include "headroom/preprocess/window_frames.hpp"
#include "headroom/store/graph_segment_reader.hpp"
#include "headroom/store/store_builder.hpp"
#include "headroom/util/output_path.hpp"
#include "headroom/util/staged_directory.hpp"
#include "preprocess_phases.hpp"

namespace headroom::preprocess {
namespace {

struct LoadedPart {
  std::filesystem::path directory;
  StorePart manifest;
};

std::string names_of(const std::vector<ShardSpec>& shards) {
  std::string names;
  for (const auto& shard : shards) names += (names.empty() ? "" : ", ") + shard_name(shard);
  return names;
}

// The shards whose part directories are in `directory`, checked to be all N of one N.
std::vector<ShardSpec> complete_part_set(const std::filesystem::path& directory) {
  const auto none = fmt::format(
      "no store parts in '{}': run `headroom preprocess DATASET --out STORE --shard I/N` for "
      "every I from 0 to N-1 first",
      directory.string());
  std::error_code ec;
  if (!std::filesystem::is_directory(directory, ec)) throw std::runtime_error(none);
  std::set<std::pair<std::uint32_t, std::uint32_t>> found;  // (count, index): grouped by N
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (const auto shard = parse_shard_name(entry.path().filename().string()))
      found.emplace(shard->count, shard->index);
  }
  if (found.empty()) throw std::runtime_error(none);
  std::vector<ShardSpec> shards;
  for (const auto& [count, index] : found) shards.push_back({index, count});
  if (shards.front().count != shards.back().count)
    throw std::runtime_error(fmt::format(
        "'{}' holds parts of different shard counts ({}): remove the parts of the run you do not "
        "mean to assemble",
        directory.string(), names_of(shards)));
  const std::uint32_t count = shards.front().count;
  std::vector<ShardSpec> missing;
  for (std::uint32_t i = 0; i < count; ++i)
    if (!found.contains({count, i})) missing.push_back({i, count});
  if (!missing.empty())
    throw std::runtime_error(
        fmt::format("'{}' lacks part{} {} of {}: run (or wait for) --shard {}/{}{}",
                    directory.string(), missing.size() > 1 ? "s" : "", names_of(missing), count,
                    missing.front().index, count, missing.size() > 1 ? " and the others" : ""));
  return shards;
}

// Reads and checks one part: its settings equal this command's, it holds the files the shard plan
// gives it, and its files are complete and match their checksums (read once here, on `threads`
// threads, so that no changed byte of a part reaches the store).
LoadedPart load_part(const std::filesystem::path& directory, ShardSpec shard,
                     const dataset::DatasetLayout& layout, const PartSettings& ours,
                     unsigned threads) {
  LoadedPart part{directory, read_part_manifest(directory)};
  const auto name = shard_name(shard);
  if (part.manifest.shard != shard)
    throw std::runtime_error(fmt::format("part '{}' records shard {}: it was renamed",
                                         directory.string(), shard_name(part.manifest.shard)));
  const auto difference = settings_difference(part.manifest.settings, ours);
  if (!difference.empty())
    throw std::runtime_error(fmt::format(
        "part {} was built with other settings than this command: {}. Assemble with the flags "
        "the shards ran with, or rebuild the parts",
        name, difference));
  std::vector<std::size_t> held;
  for (const auto& record : part.manifest.files) held.push_back(record.file);
  if (held != files_of_shard(layout, shard))
    throw std::runtime_error(
        fmt::format("part {} holds other files than shard {}/{} of this dataset has", name,
                    shard.index, shard.count));
  for (const auto& record : part.manifest.files) {
    store::require_complete_segment(part_segment(directory, record));
    const auto frames = part_frames_file(directory, record.file);
    std::error_code ec;
    if (record.has_frames &&
        std::filesystem::file_size(frames, ec) != record.rows * kStoredFrameBytes)
      throw std::runtime_error(
          fmt::format("part {}: '{}' is missing or incomplete", name, frames.string()));
  }
  std::atomic<bool> stop{false};
  detail::parallel_for(part.manifest.files.size(), threads, stop, [&](std::size_t k) {
    verify_part_file(directory, shard, part.manifest.files[k]);
  });
  return part;
}

// Per layout file: the part that read it and its record there.
struct PartFile {
  const LoadedPart* part = nullptr;
  const PartFileRecord* record = nullptr;
};

std::vector<PartFile> index_part_files(const std::vector<LoadedPart>& parts, std::size_t files) {
  std::vector<PartFile> index(files);
  for (const auto& part : parts)
    for (const auto& record : part.manifest.files) index[record.file] = {&part, &record};
  return index;
}

// What preprocess_dataset's reading would have produced, as far as it does not depend on the
// vocabulary: every segment raw-keyed (test files are re-keyed later).
detail::FileOutcomes outcomes_from_parts(const std::vector<PartFile>& files) {
  detail::FileOutcomes outcomes;
  for (const auto& [part, record] : files) {
    FileGraphResult result;
    result.rows = record->rows;
    result.attack_rows = record->attack_rows;
    result.skipped_rows = record->skipped_rows;
    result.graphs = record->graphs;
    result.can_ids = record->can_ids;
    result.frames_hash = record->frames_hash;
    outcomes.results.push_back(std::move(result));
    outcomes.segments.push_back(part_segment(part->directory, *record));
  }
  return outcomes;
}

bool has_unknown_ids(const std::vector<std::uint32_t>& ids,
                     const graph::CanIdVocabulary& vocabulary) {
  return std::any_of(ids.begin(), ids.end(), [&](std::uint32_t id) {
    return vocabulary.index_of(id) == vocabulary.out_of_vocabulary_index();
  });
}

struct RekeyedFile {
  store::SegmentSummary segment;
  std::uint64_t mostly_unknown = 0;
  std::uint64_t rebuilt = 0;
};

// A test file's graphs keyed by vocabulary index, into a segment of the builder: a window whose
// IDs are all in the vocabulary is the part's graph with its keys renamed; any other is rebuilt
// from the part's frames, as one process builds it. Under an identity other than the CAN ID, one
// process keys test files by raw ID too: the part's graphs are kept, and only the windows of
// mostly unknown IDs are counted.
RekeyedFile rekey_test_file(const PartFile& file, std::size_t index,
                            const graph::CanIdVocabulary& vocabulary,
                            const PreprocessOptions& options, const store::StoreBuilder& builder) {
  const graph::WindowConfig& window = options.window;
  const bool raw_keys = options.features.identity != graph::NodeIdentity::kCanId;
  store::GraphSegmentReader reader(part_segment(file.part->directory, *file.record));
  const WindowFrames frames(part_frames_file(file.part->directory, index), file.record->rows);
  auto segment = builder.open_segment(
      index, raw_keys ? store::SegmentKeys::kRawCanIds : store::SegmentKeys::kVocabularyIndices);
  graph::WindowGraphBuilder window_builder(window, options.features);
  graph::WindowGraph graph;
  graph::WindowGraph rebuilt;
  std::vector<can::CanFrame> window_frames;
  std::vector<std::uint32_t> keys;
  RekeyedFile out;
  std::uint32_t window_index = 0;
  while (reader.next(graph, window_index)) {
    if (raw_keys) {
      frames.window(window_index, window, window_frames);
      out.mostly_unknown += mostly_unknown_ids(window_frames, vocabulary);
      segment->append(graph, window_index);
      continue;
    }
    if (!has_unknown_ids(graph.node_keys, vocabulary)) {
      for (std::size_t n = 0; n < graph.node_keys.size(); ++n) {
        graph.node_keys[n] = vocabulary.index_of(graph.node_keys[n]);
        graph.node_features[n * graph.node_feature_count] = static_cast<float>(graph.node_keys[n]);
      }
      segment->append(graph, window_index);
      continue;
    }
    frames.window(window_index, window, window_frames);
    out.mostly_unknown +=
        build_window_graph(window_builder, window_frames, &vocabulary, keys, rebuilt);
    segment->append(rebuilt, window_index);
    ++out.rebuilt;
  }
  out.segment = segment->finish();
  return out;
}

// Re-keys, on `threads` threads, the test files with IDs outside the vocabulary (the others keep
// their raw-keyed segments: the commit maps those keys).
void rekey_test_files(const dataset::DatasetLayout& layout, const std::vector<PartFile>& files,
                      const graph::CanIdVocabulary& vocabulary, const PreprocessOptions& options,
                      const store::StoreBuilder& builder, detail::FileOutcomes& outcomes,
                      AssemblyReport& report) {
  std::vector<std::size_t> rekeyed;
  for (std::size_t i = layout.train_file_count; i < layout.files.size(); ++i)
    if (has_unknown_ids(files[i].record->can_ids, vocabulary)) rekeyed.push_back(i);
  std::vector<RekeyedFile> results(rekeyed.size());
  std::atomic<bool> stop{false};
  detail::parallel_for(rekeyed.size(), detail::worker_threads(options), stop, [&](std::size_t k) {
    results[k] = rekey_test_file(files[rekeyed[k]], rekeyed[k], vocabulary, options, builder);
  });
  for (std::size_t k = 0; k < rekeyed.size(); ++k) {
    outcomes.segments[rekeyed[k]] = results[k].segment;
    outcomes.results[rekeyed[k]].mostly_unknown_graphs = results[k].mostly_unknown;
    report.rebuilt_windows += results[k].rebuilt;
  }
  report.rekeyed_files = rekeyed.size();
}

// The parts are consumed once the store is in place; a failed assembly leaves them for a retry.
// A part someone added files to stays (with a warning): only headroom's entries are deleted.
void remove_parts(const std::filesystem::path& directory, const std::vector<LoadedPart>& parts) {
  for (const auto& part : parts) util::remove_if_ours(part.directory, store_part_kind());
  std::error_code ignored;
  std::filesystem::remove(directory, ignored);  // only when nothing else is left in it
}

}  // namespace

AssemblyReport assemble_store(const std::filesystem::path& dataset_root,
                              const std::filesystem::path& store_path,
                              const PreprocessOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  detail::check_options(options);
  util::require_disjoint(store_path, "the store (--out)", dataset_root, "the dataset");
  store::StoreBuilder builder(store_path, options.overwrite, options.when_locked);
  const dataset::DatasetLayout layout = dataset::scan_dataset(dataset_root, options.scan);
  const auto directory = parts_directory(store_path);
  const auto settings = part_settings(layout, options);
  std::vector<LoadedPart> parts;
  for (const auto& shard : complete_part_set(directory))
    parts.push_back(load_part(directory / shard_name(shard), shard, layout, settings,
                              detail::worker_threads(options)));
  const auto files = index_part_files(parts, layout.files.size());

  AssemblyReport report;
  report.parts = static_cast<std::uint32_t>(parts.size());
  auto outcomes = outcomes_from_parts(files);
  detail::DuplicateScreen screen;
  detail::screen_duplicates(layout, outcomes.results, 0, layout.train_file_count,
                            !options.keep_duplicate_files, screen);
  const auto vocabulary = detail::training_vocabulary(layout, outcomes.results, screen);
  rekey_test_files(layout, files, vocabulary, options, builder, outcomes, report);
  detail::screen_duplicates(layout, outcomes.results, layout.train_file_count, layout.files.size(),
                            false, screen);
  report.store =
      detail::commit_store(builder, layout, options, outcomes, std::move(screen), vocabulary);
  remove_parts(directory, parts);
  report.store.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

}  // namespace headroom::preprocess
