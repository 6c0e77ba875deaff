#include "preprocess_phases.hpp"

#include <map>
#include <stdexcept>
#include <string>

#include "headroom/graph/window_graph.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::preprocess::detail {
namespace {

store::StoreMetadata describe_build(const dataset::DatasetLayout& layout,
                                    const PreprocessOptions& options) {
  store::StoreMetadata metadata;
  metadata.created_by = std::string("headroom ") + HEADROOM_VERSION;
  metadata.dataset_root = layout.root.string();
  metadata.window = options.window.window;
  metadata.stride = options.window.stride;
  metadata.node_feature_count = static_cast<std::uint32_t>(options.features.count());
  metadata.node_features = options.features;
  metadata.edge_feature_count = graph::kEdgeFeatureCount;
  metadata.validation_fraction = options.validation_fraction;
  metadata.validation_seed = options.seed;
  metadata.validation_by = options.validation_by;
  metadata.vocabulary_from = options.vocabulary_from;
  metadata.excluded_files = layout.excluded;
  metadata.source_format = options.reader.format;
  if (options.reader.format == can::LogFormat::kMappedCsv)
    metadata.source_mapping = options.reader.mapping;
  for (const auto& split : layout.splits) {
    metadata.splits.push_back(
        {split.name, split.role == dataset::SplitRole::kTrain ? "train" : "test"});
  }
  return metadata;
}

// Attack type names, sorted, into metadata.attack_types; returns each name's index.
// Each file's attack type: as the layout names it, except that a file without a single attack
// frame is attack-free traffic whatever its name says (set_01's "accessory-1" is a drive, not an
// attack). Such renamings of kept files are listed in the report.
std::vector<std::string> attack_types_by_labels(const dataset::DatasetLayout& layout,
                                                const std::vector<FileGraphResult>& results,
                                                const std::vector<bool>& left_out,
                                                PreprocessReport& report) {
  std::vector<std::string> types;
  types.reserve(layout.files.size());
  for (std::size_t i = 0; i < layout.files.size(); ++i) {
    const auto& file = layout.files[i];
    if (results[i].attack_rows > 0) {
      types.push_back(file.attack_type);
      continue;
    }
    types.emplace_back(dataset::kAttackFreeType);
    if (!left_out[i] && file.attack_type != dataset::kAttackFreeType)
      report.attack_free_files.push_back({file.relative_path, file.attack_type});
  }
  return types;
}

// The attack types of the kept files, in name order, into the metadata; name -> index.
std::map<std::string, std::uint32_t> index_attack_types(const std::vector<std::string>& types,
                                                        const std::vector<bool>& left_out,
                                                        store::StoreMetadata& metadata) {
  std::map<std::string, std::uint32_t> attack_index;
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (!left_out[i]) attack_index.emplace(types[i], 0);
  }
  for (auto& [name, index] : attack_index) {
    index = static_cast<std::uint32_t>(metadata.attack_types.size());
    metadata.attack_types.push_back(name);
  }
  return attack_index;
}

}  // namespace

void check_options(const PreprocessOptions& options) {
  options.window.validate();
  if (options.vocabulary_from != "all" && options.vocabulary_from != "normal")
    throw std::invalid_argument("--vocabulary-from must be all or normal, not '" +
                                util::printable(options.vocabulary_from) + "'");
  if (options.reader.format == can::LogFormat::kMappedCsv) options.reader.mapping.validate();
}

unsigned worker_threads(const PreprocessOptions& options) {
  return options.threads > 0 ? options.threads : std::max(1U, std::thread::hardware_concurrency());
}

unsigned helper_threads_for(std::size_t files, unsigned threads) {
  if (files == 0 || files >= threads) return 0;
  return static_cast<unsigned>((threads - files) / files);
}

void screen_duplicates(const dataset::DatasetLayout& layout,
                       const std::vector<FileGraphResult>& results, std::size_t begin,
                       std::size_t end, bool leave_out, DuplicateScreen& screen) {
  screen.left_out.resize(layout.files.size(), false);
  for (std::size_t i = begin; i < end; ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (screen.left_out[j] || results[j].frames_hash != results[i].frames_hash ||
          results[j].rows != results[i].rows)
        continue;
      screen.left_out[i] = leave_out;
      screen.duplicates.push_back(
          {layout.files[i].relative_path, layout.files[j].relative_path, leave_out});
      break;
    }
  }
}

graph::CanIdVocabulary training_vocabulary(const dataset::DatasetLayout& layout,
                                           const std::vector<FileGraphResult>& results,
                                           const DuplicateScreen& screen) {
  std::vector<std::uint32_t> training_ids;
  for (std::size_t i = 0; i < layout.train_file_count; ++i) {
    if (screen.left_out[i]) continue;
    training_ids.insert(training_ids.end(), results[i].can_ids.begin(), results[i].can_ids.end());
  }
  return graph::CanIdVocabulary(std::move(training_ids));
}

PreprocessReport commit_store(store::StoreBuilder& builder, const dataset::DatasetLayout& layout,
                              const PreprocessOptions& options, const FileOutcomes& outcomes,
                              DuplicateScreen screen, const graph::CanIdVocabulary& vocabulary) {
  store::StoreMetadata metadata = describe_build(layout, options);
  PreprocessReport report;
  const auto attack_types =
      attack_types_by_labels(layout, outcomes.results, screen.left_out, report);
  const auto attack_index = index_attack_types(attack_types, screen.left_out, metadata);
  report.excluded = layout.excluded;
  report.skipped_entries = layout.skipped;
  report.duplicates = std::move(screen.duplicates);
  std::vector<store::SegmentSummary> kept_segments;
  for (std::size_t i = 0; i < layout.files.size(); ++i) {
    const auto& file = layout.files[i];
    const auto& result = outcomes.results[i];
    if (screen.left_out[i]) {
      builder.discard_segment(outcomes.segments[i]);
      metadata.excluded_files.push_back(file.relative_path);
      continue;
    }
    kept_segments.push_back(outcomes.segments[i]);
    store::SourceFileRecord record;
    record.path = file.relative_path;
    record.split = file.split;
    record.attack_type = attack_index.at(attack_types[i]);
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
  return report;
}

}  // namespace headroom::preprocess::detail
