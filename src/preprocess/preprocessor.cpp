#include "headroom/preprocess/preprocessor.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "headroom/graph/can_id_vocabulary.hpp"
#include "headroom/graph/window_graph.hpp"
#include "headroom/preprocess/file_graph_stream.hpp"
#include "headroom/store/store_builder.hpp"
#include "headroom/util/output_path.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/progress_bar.hpp"

namespace headroom::preprocess {
namespace {

// Runs task(i) for i in [0, count) on `threads` threads. The first exception stops the others
// (they poll `stop`) and is rethrown here.
template <typename Task>
void parallel_for(std::size_t count, unsigned threads, std::atomic<bool>& stop, Task task) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    for (;;) {
      if (stop.load()) return;
      const std::size_t i = next.fetch_add(1);
      if (i >= count) return;
      try {
        task(i);
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        stop.store(true);
        return;
      }
    }
  };
  const unsigned n = std::max(1U, std::min<unsigned>(threads, static_cast<unsigned>(count)));
  std::vector<std::jthread> pool;
  for (unsigned t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  pool.clear();  // joins
  if (failure) std::rethrow_exception(failure);
}

// Files [begin, end) whose frames repeat a file read before them (training files, then test
// files, in layout order), by frame hash and row count. With `leave_out`, those copies are marked
// in `left_out`; test files are only ever reported.
void find_duplicates(const dataset::DatasetLayout& layout,
                     const std::vector<FileGraphResult>& results, std::size_t begin,
                     std::size_t end, bool leave_out, std::vector<bool>& left_out,
                     std::vector<DuplicateFile>& duplicates) {
  for (std::size_t i = begin; i < end; ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (left_out[j] || results[j].frames_hash != results[i].frames_hash ||
          results[j].rows != results[i].rows)
        continue;
      left_out[i] = leave_out;
      duplicates.push_back(
          {layout.files[i].relative_path, layout.files[j].relative_path, leave_out});
      break;
    }
  }
}

}  // namespace

PreprocessReport preprocess_dataset(const std::filesystem::path& dataset_root,
                                    const std::filesystem::path& store_path,
                                    const PreprocessOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  options.window.validate();
  if (options.vocabulary_from != "all" && options.vocabulary_from != "normal")
    throw std::invalid_argument("--vocabulary-from must be all or normal, not '" +
                                util::printable(options.vocabulary_from) + "'");
  util::require_disjoint(store_path, "the store (--out)", dataset_root, "the dataset");
  if (options.reader.format == can::LogFormat::kMappedCsv) options.reader.mapping.validate();
  const dataset::DatasetLayout layout = dataset::scan_dataset(dataset_root, options.scan);
  const unsigned threads =
      options.threads > 0 ? options.threads : std::max(1U, std::thread::hardware_concurrency());

  store::StoreBuilder builder(store_path, options.overwrite);

  std::uint64_t total_bytes = 0;
  for (const auto& file : layout.files) total_bytes += file.size_bytes;
  util::ProgressBar progress_bar("preprocess", total_bytes, "rows", options.progress);
  const ProgressCallback progress = [&](std::uint64_t bytes, std::uint64_t rows) {
    progress_bar.advance(bytes, rows);
  };

  std::vector<FileGraphResult> results(layout.files.size());
  std::vector<store::SegmentSummary> segments(layout.files.size());
  std::atomic<bool> stop{false};

  // Threads left over when a phase has fewer files than threads build each file's windows in
  // parallel with its reading.
  auto helpers_for = [&](std::size_t files) -> unsigned {
    if (files == 0 || files >= threads) return 0;
    return static_cast<unsigned>((threads - files) / files);
  };
  unsigned helper_threads = 0;
  auto process = [&](std::size_t i, const graph::CanIdVocabulary* vocabulary) {
    auto segment =
        builder.open_segment(i, vocabulary == nullptr ? store::SegmentKeys::kRawCanIds
                                                      : store::SegmentKeys::kVocabularyIndices);
    results[i] =
        build_file_graphs(layout.files[i], options.reader, options.window, vocabulary, *segment,
                          progress, &stop, helper_threads, options.vocabulary_from == "normal");
    segments[i] = segment->finish();
  };

  // Training files first, keyed by raw CAN ID; their IDs make the vocabulary the test files need.
  helper_threads = helpers_for(layout.train_file_count);
  parallel_for(layout.train_file_count, threads, stop, [&](std::size_t i) { process(i, nullptr); });
  PreprocessReport report;
  std::vector<bool> left_out(layout.files.size(), false);
  find_duplicates(layout, results, 0, layout.train_file_count, !options.keep_duplicate_files,
                  left_out, report.duplicates);
  std::vector<std::uint32_t> training_ids;
  for (std::size_t i = 0; i < layout.train_file_count; ++i) {
    if (left_out[i]) continue;
    training_ids.insert(training_ids.end(), results[i].can_ids.begin(), results[i].can_ids.end());
  }
  const graph::CanIdVocabulary vocabulary(std::move(training_ids));
  const std::size_t test_files = layout.files.size() - layout.train_file_count;
  helper_threads = helpers_for(test_files);
  parallel_for(test_files, threads, stop,
               [&](std::size_t i) { process(layout.train_file_count + i, &vocabulary); });
  progress_bar.finish();
  find_duplicates(layout, results, layout.train_file_count, layout.files.size(), false, left_out,
                  report.duplicates);

  store::StoreMetadata metadata;
  metadata.created_by = std::string("headroom ") + HEADROOM_VERSION;
  metadata.dataset_root = layout.root.string();
  metadata.window = options.window.window;
  metadata.stride = options.window.stride;
  metadata.node_feature_count = graph::kNodeFeatureCount;
  metadata.edge_feature_count = graph::kEdgeFeatureCount;
  metadata.validation_fraction = options.validation_fraction;
  metadata.validation_seed = options.seed;
  metadata.validation_by = options.validation_by;
  metadata.vocabulary_from = options.vocabulary_from;
  metadata.excluded_files = layout.excluded;
  for (const auto& split : layout.splits) {
    metadata.splits.push_back(
        {split.name, split.role == dataset::SplitRole::kTrain ? "train" : "test"});
  }
  std::map<std::string, std::uint32_t> attack_index;
  for (const auto& file : layout.files) attack_index.emplace(file.attack_type, 0);
  for (auto& [name, index] : attack_index) {
    index = static_cast<std::uint32_t>(metadata.attack_types.size());
    metadata.attack_types.push_back(name);
  }

  report.excluded = layout.excluded;
  std::vector<store::SegmentSummary> kept_segments;
  for (std::size_t i = 0; i < layout.files.size(); ++i) {
    const auto& file = layout.files[i];
    const auto& result = results[i];
    if (left_out[i]) {
      builder.discard_segment(segments[i]);
      metadata.excluded_files.push_back(file.relative_path);
      continue;
    }
    kept_segments.push_back(segments[i]);
    store::SourceFileRecord record;
    record.path = file.relative_path;
    record.split = file.split;
    record.attack_type = attack_index.at(file.attack_type);
    record.rows = result.rows;
    record.attack_rows = result.attack_rows;
    record.skipped_rows = result.skipped_rows;
    record.mostly_unknown_graphs = result.mostly_unknown_graphs;
    metadata.files.push_back(record);
    report.files.push_back({file.relative_path, result.rows, result.skipped_rows, result.graphs});
    report.rows += result.rows;
    report.skipped_rows += result.skipped_rows;
    report.graphs += result.graphs;
  }
  report.vocabulary_size = vocabulary.size();
  builder.commit(std::move(metadata), kept_segments, vocabulary);
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

}  // namespace headroom::preprocess
