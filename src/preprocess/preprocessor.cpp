#include "headroom/preprocess/preprocessor.hpp"

#include <atomic>
#include <chrono>

#include "headroom/graph/can_id_vocabulary.hpp"
#include "headroom/preprocess/file_graph_stream.hpp"
#include "headroom/store/store_builder.hpp"
#include "headroom/util/output_path.hpp"
#include "headroom/util/progress_bar.hpp"
#include "preprocess_phases.hpp"

namespace headroom::preprocess {
namespace {

// Reads files [begin, end) of the layout into the builder's segments, `threads` files at a time:
// keyed by raw CAN ID without a vocabulary (training files) or under an identity other than the
// CAN ID, by vocabulary index otherwise.
void read_files(const dataset::DatasetLayout& layout, std::size_t begin, std::size_t end,
                const PreprocessOptions& options, unsigned threads,
                const graph::CanIdVocabulary* vocabulary, const store::StoreBuilder& builder,
                const ProgressCallback& progress, std::atomic<bool>& stop,
                detail::FileOutcomes& outcomes) {
  FileGraphOptions file_options;
  file_options.helper_threads = detail::helper_threads_for(end - begin, threads);
  file_options.normal_frame_ids = options.vocabulary_from == "normal";
  file_options.features = options.features;
  file_options.raw_keys = options.features.identity != graph::NodeIdentity::kCanId;
  const bool raw_keys = vocabulary == nullptr || file_options.raw_keys;
  detail::parallel_for(end - begin, threads, stop, [&](std::size_t k) {
    const std::size_t i = begin + k;
    auto segment = builder.open_segment(
        i, raw_keys ? store::SegmentKeys::kRawCanIds : store::SegmentKeys::kVocabularyIndices);
    outcomes.results[i] = build_file_graphs(layout.files[i], options.reader, options.window,
                                            vocabulary, *segment, progress, &stop, file_options);
    outcomes.segments[i] = segment->finish();
  });
}

}  // namespace

PreprocessReport preprocess_dataset(const std::filesystem::path& dataset_root,
                                    const std::filesystem::path& store_path,
                                    const PreprocessOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  detail::check_options(options);
  util::require_disjoint(store_path, "the store (--out)", dataset_root, "the dataset");
  const dataset::DatasetLayout layout = dataset::scan_dataset(dataset_root, options.scan);
  const unsigned threads = detail::worker_threads(options);

  store::StoreBuilder builder(store_path, options.overwrite, options.when_locked);

  std::uint64_t total_bytes = 0;
  for (const auto& file : layout.files) total_bytes += file.size_bytes;
  util::ProgressBar progress_bar("preprocess", total_bytes, "rows", options.progress);
  const ProgressCallback progress = [&](std::uint64_t bytes, std::uint64_t rows) {
    progress_bar.advance(bytes, rows);
  };

  detail::FileOutcomes outcomes;
  outcomes.results.resize(layout.files.size());
  outcomes.segments.resize(layout.files.size());
  std::atomic<bool> stop{false};

  // Training files first, keyed by raw CAN ID; their IDs make the vocabulary the test files need.
  read_files(layout, 0, layout.train_file_count, options, threads, nullptr, builder, progress, stop,
             outcomes);
  detail::DuplicateScreen screen;
  detail::screen_duplicates(layout, outcomes.results, 0, layout.train_file_count,
                            !options.keep_duplicate_files, screen);
  const auto vocabulary = detail::training_vocabulary(layout, outcomes.results, screen);
  read_files(layout, layout.train_file_count, layout.files.size(), options, threads, &vocabulary,
             builder, progress, stop, outcomes);
  progress_bar.finish();
  detail::screen_duplicates(layout, outcomes.results, layout.train_file_count, layout.files.size(),
                            false, screen);

  auto report =
      detail::commit_store(builder, layout, options, outcomes, std::move(screen), vocabulary);
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

}  // namespace headroom::preprocess
