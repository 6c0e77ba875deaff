// `headroom preprocess --shard I/N`: one shard's files into its store part.
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>

#include "headroom/preprocess/file_graph_stream.hpp"
#include "headroom/preprocess/sharded_preprocess.hpp"
#include "headroom/preprocess/store_part.hpp"
#include "headroom/preprocess/window_frames.hpp"
#include "headroom/store/store_metadata.hpp"
#include "headroom/store/store_ownership.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/output_path.hpp"
#include "headroom/util/progress_bar.hpp"
#include "headroom/util/staged_directory.hpp"
#include "preprocess_phases.hpp"

namespace headroom::preprocess {
namespace {

// What the assembly would refuse, refused now, before any shard spends time reading.
void check_shard_outputs(const std::filesystem::path& dataset_root,
                         const std::filesystem::path& store_path, bool overwrite) {
  util::require_disjoint(store_path, "the store (--out)", dataset_root, "the dataset");
  util::require_disjoint(parts_directory(store_path), "the store's parts", dataset_root,
                         "the dataset");
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(store_path, ec))) return;
  if (!overwrite)
    throw std::runtime_error(fmt::format(
        "store '{}' already exists (use --force to replace it when the parts are assembled)",
        store_path.string()));
  util::require_replaceable(store_path, store::graph_store_kind());
}

struct ShardContext {
  const dataset::DatasetLayout& layout;
  const PreprocessOptions& options;
  const std::filesystem::path& staging;
  FileGraphOptions file_options;
  ProgressCallback progress;
  std::atomic<bool>& stop;
};

// Layout file `index` into the staging part, keyed by raw CAN ID: a training file collects its IDs
// as --vocabulary-from says; a test file collects every frame's IDs and keeps its frames.
PartFileRecord read_into_part(const ShardContext& context, std::size_t index) {
  const auto& file = context.layout.files[index];
  const bool is_test = index >= context.layout.train_file_count;
  store::GraphSegmentWriter segment(part_file_prefix(context.staging, index),
                                    store::SegmentKeys::kRawCanIds, /*checksummed=*/true);
  std::optional<WindowFrameWriter> frames;
  FileGraphOptions file_options = context.file_options;
  if (is_test) {
    frames.emplace(part_frames_file(context.staging, index));
    file_options.normal_frame_ids = false;
    file_options.record_frames = &*frames;
  }
  const auto result =
      build_file_graphs(file, context.options.reader, context.options.window, nullptr, segment,
                        context.progress, &context.stop, file_options);
  const auto summary = segment.finish(/*durable=*/true);
  PartFileRecord record{index,
                        file.relative_path,
                        result.rows,
                        result.attack_rows,
                        result.skipped_rows,
                        result.graphs,
                        summary.nodes,
                        summary.edges,
                        result.frames_hash,
                        result.can_ids,
                        frames.has_value(),
                        summary.node_feature_count,
                        {}};
  for (std::size_t k = 0; k < store::kSegmentFileSuffixes.size(); ++k)
    record.checksums[store::kSegmentFileSuffixes[k]] = summary.checksums[k];
  if (frames) {
    frames->finish();
    record.checksums[kFramesFileSuffix] = frames->checksum();
  }
  return record;
}

}  // namespace

ShardReport preprocess_shard(const std::filesystem::path& dataset_root,
                             const std::filesystem::path& store_path,
                             const PreprocessOptions& options, ShardSpec shard) {
  const auto started = std::chrono::steady_clock::now();
  detail::check_options(options);
  if (shard.count == 0 || shard.index >= shard.count)
    throw std::invalid_argument(fmt::format("shard {} does not exist", shard_name(shard)));
  check_shard_outputs(dataset_root, store_path, options.overwrite);
  const dataset::DatasetLayout layout = dataset::scan_dataset(dataset_root, options.scan);
  const auto files = files_of_shard(layout, shard);
  const unsigned threads = detail::worker_threads(options);

  util::StagedDirectory part(parts_directory(store_path) / shard_name(shard), options.overwrite,
                             store_part_kind());
  std::uint64_t shard_bytes = 0;
  for (const auto i : files) shard_bytes += layout.files[i].size_bytes;
  util::ProgressBar progress_bar(fmt::format("shard {}/{}", shard.index, shard.count), shard_bytes,
                                 "rows", options.progress);
  std::atomic<bool> stop{false};
  ShardContext context{layout, options, part.staging(), {}, {}, stop};
  context.file_options.helper_threads = detail::helper_threads_for(files.size(), threads);
  context.file_options.normal_frame_ids = options.vocabulary_from == "normal";
  context.file_options.features = options.features;
  context.progress = [&](std::uint64_t bytes, std::uint64_t rows) {
    progress_bar.advance(bytes, rows);
  };

  StorePart manifest{shard, std::string("headroom ") + HEADROOM_VERSION,
                     part_settings(layout, options), std::vector<PartFileRecord>(files.size())};
  detail::parallel_for(files.size(), threads, stop, [&](std::size_t k) {
    manifest.files[k] = read_into_part(context, files[k]);
  });
  progress_bar.finish();
  util::write_file_atomically(part.staging() / kPartManifestFileName,
                              render_part_manifest(manifest));
  part.commit();

  ShardReport report{shard, part.target(), {}, 0, 0, 0, 0.0};
  for (const auto& record : manifest.files) {
    report.files.push_back({record.path, record.rows, record.skipped_rows, record.graphs});
    report.rows += record.rows;
    report.skipped_rows += record.skipped_rows;
    report.graphs += record.graphs;
  }
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

}  // namespace headroom::preprocess
