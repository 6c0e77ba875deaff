#include "headroom/store/store_builder.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>

#include "headroom/store/store_arrays.hpp"
#include "headroom/store/store_error.hpp"
#include "headroom/store/store_ownership.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/printable_text.hpp"
#include "store_build_path.hpp"

namespace headroom::store {
namespace {

constexpr std::size_t kChunkNodes = 64 << 10;

// Reads a scratch file in fixed-size chunks of T; the whole file is never held in memory.
template <typename T>
class ChunkReader {
 public:
  explicit ChunkReader(const std::filesystem::path& path)
      : path_(path), file_(std::fopen(path.c_str(), "rb")) {
    if (file_ == nullptr) {
      throw std::system_error(errno, std::generic_category(),
                              fmt::format("cannot open '{}'", util::printable_path(path)));
    }
  }
  ~ChunkReader() {
    if (file_ != nullptr) std::fclose(file_);
  }
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  // Reads exactly `count` values into `out` (resized); throws if the file is shorter.
  void read(std::size_t count, std::vector<T>& out) {
    out.resize(count);
    if (count > 0 && std::fread(out.data(), sizeof(T), count, file_) != count) {
      throw StoreError(fmt::format("segment '{}' is truncated", util::printable_path(path_)));
    }
  }

 private:
  std::filesystem::path path_;
  std::FILE* file_;
};

std::filesystem::path segment_file(const SegmentSummary& segment, const char* suffix) {
  auto path = segment.prefix;
  path += suffix;
  return path;
}

struct ArrayOutput {
  const arrays::ArraySpec& spec;
  std::vector<std::uint64_t> trailing_shape;  // shape after the first dimension
  std::unique_ptr<util::ChecksummedFileWriter> writer;
  // The first dimension, where the bytes cannot tell it: rows of no elements (a dataset with no
  // edge features has an [edges, 0] edge feature array).
  std::uint64_t rows_of_no_elements = 0;

  ArrayRecord finish() {
    writer->close();
    ArrayRecord record;
    record.file = writer->path().filename().string();
    record.dtype = spec.dtype;
    std::uint64_t row_elements = 1;
    for (auto d : trailing_shape) row_elements *= d;
    record.shape.push_back(row_elements == 0
                               ? rows_of_no_elements
                               : writer->bytes_written() / spec.element_bytes / row_elements);
    record.shape.insert(record.shape.end(), trailing_shape.begin(), trailing_shape.end());
    record.bytes = writer->bytes_written();
    record.xxh3 = util::checksum_hex(writer->checksum());
    return record;
  }
};

// Exactly uniform integer in [0, bound) from mt19937_64, independent of the standard library's
// (implementation-defined) distributions, so splits are identical on every platform.
std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t bound) {
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  std::uint64_t value = 0;
  do {
    value = rng();
  } while (value >= limit);
  return value % bound;
}

}  // namespace

TrainValidationSplit split_train_validation(const std::vector<std::uint32_t>& training_graphs,
                                            double validation_fraction, std::uint64_t seed) {
  if (!(validation_fraction >= 0.0 && validation_fraction < 1.0)) {
    throw std::invalid_argument(
        fmt::format("validation fraction must be in [0, 1), got {}", validation_fraction));
  }
  std::vector<std::uint32_t> order = training_graphs;
  std::mt19937_64 rng(seed);
  for (std::size_t i = order.size(); i > 1; --i) {
    std::swap(order[i - 1], order[uniform_below(rng, i)]);
  }
  const auto validation_count = static_cast<std::size_t>(
      std::llround(validation_fraction * static_cast<double>(order.size())));
  TrainValidationSplit split;
  split.validation.assign(order.begin(),
                          order.begin() + static_cast<std::ptrdiff_t>(validation_count));
  split.train.assign(order.begin() + static_cast<std::ptrdiff_t>(validation_count), order.end());
  std::sort(split.validation.begin(), split.validation.end());
  std::sort(split.train.begin(), split.train.end());
  return split;
}

void StoreBuilder::discard_segment(const SegmentSummary& segment) const {
  if (segment.prefix.parent_path() != temporary_directory()) return;  // not this builder's
  for (const char* suffix : kSegmentFileSuffixes)
    std::filesystem::remove(segment_file(segment, suffix));
}

TrainValidationSplit split_train_validation_by_file(
    const std::vector<std::uint32_t>& training_graphs, const std::vector<std::uint32_t>& file_of,
    const std::vector<std::uint8_t>& label_of, double validation_fraction, std::uint64_t seed) {
  if (!(validation_fraction >= 0.0 && validation_fraction < 1.0))
    throw std::invalid_argument(
        fmt::format("validation fraction must be in [0, 1), got {}", validation_fraction));
  if (file_of.size() != training_graphs.size() || label_of.size() != training_graphs.size())
    throw std::invalid_argument(
        "split_train_validation_by_file: one file and one label per graph expected");
  std::map<std::uint32_t, std::uint64_t> graphs_per_file;
  std::set<std::uint32_t> attack_files;
  for (std::size_t k = 0; k < file_of.size(); ++k) {
    ++graphs_per_file[file_of[k]];
    if (label_of[k] != 0) attack_files.insert(file_of[k]);
  }
  std::vector<std::uint32_t> files;
  for (const auto& [file, count] : graphs_per_file) files.push_back(file);
  std::mt19937_64 rng(seed);
  for (std::size_t i = files.size(); i > 1; --i)
    std::swap(files[i - 1], files[uniform_below(rng, i)]);

  std::set<std::uint32_t> validation_files;
  for (const bool attacks : {true, false}) {
    std::vector<std::uint32_t> stratum;  // in the shuffled order
    std::uint64_t stratum_graphs = 0;
    for (const auto file : files)
      if (attack_files.count(file) == (attacks ? 1U : 0U)) {
        stratum.push_back(file);
        stratum_graphs += graphs_per_file[file];
      }
    if (stratum.size() < 2) continue;
    const auto target = static_cast<double>(
        std::llround(validation_fraction * static_cast<double>(stratum_graphs)));
    double taken = 0;
    for (std::size_t i = 0; i + 1 < stratum.size(); ++i) {
      const auto count = static_cast<double>(graphs_per_file[stratum[i]]);
      if (std::abs(taken + count - target) >= std::abs(taken - target)) continue;
      validation_files.insert(stratum[i]);
      taken += count;
    }
    if (taken == 0 && validation_fraction > 0)
      validation_files.insert(
          *std::min_element(stratum.begin(), stratum.end(), [&](std::uint32_t a, std::uint32_t b) {
            return std::pair(graphs_per_file[a], a) < std::pair(graphs_per_file[b], b);
          }));
  }
  TrainValidationSplit split;
  for (std::size_t k = 0; k < training_graphs.size(); ++k)
    (validation_files.count(file_of[k]) ? split.validation : split.train)
        .push_back(training_graphs[k]);
  std::sort(split.validation.begin(), split.validation.end());
  std::sort(split.train.begin(), split.train.end());
  return split;
}

StoreBuilder::StoreBuilder(std::filesystem::path store_path, bool overwrite,
                           util::WhenLocked when_locked)
    : store_path_(prepare_store_path(store_path, overwrite)), overwrite_(overwrite) {
  // Taken before anything beside the store is touched, so that a concurrent builder's staging
  // directory is never taken for a killed run's.
  lock_.emplace(build_lock_file(store_path_), "store " + store_path_.string() + " (being built)",
                when_locked);
  staged_ = std::make_unique<util::StagedDirectory>(store_path_, overwrite_, graph_store_kind());
}

StoreBuilder::~StoreBuilder() = default;

std::unique_ptr<GraphSegmentWriter> StoreBuilder::open_segment(std::size_t segment,
                                                               SegmentKeys keys) const {
  return std::make_unique<GraphSegmentWriter>(
      temporary_directory() / fmt::format("segment-{:06}", segment), keys);
}

void StoreBuilder::commit(StoreMetadata metadata, const std::vector<SegmentSummary>& segments,
                          const graph::CanIdVocabulary& vocabulary) {
  if (segments.size() != metadata.files.size()) {
    throw std::invalid_argument("one segment per source file expected");
  }
  auto open_array = [&](std::string_view name, std::vector<std::uint64_t> trailing = {}) {
    const arrays::ArraySpec& spec = arrays::spec_of(name);
    ArrayOutput out{spec, std::move(trailing), nullptr};
    out.writer = std::make_unique<util::ChecksummedFileWriter>(
        temporary_directory() / (std::string(spec.name) + std::string(spec.file_suffix)));
    return out;
  };
  const std::uint64_t nf = metadata.node_feature_count;
  const std::uint64_t ef = metadata.edge_feature_count;
  auto node_features = open_array(arrays::kNodeFeatures, {nf});
  auto node_can_ids = open_array(arrays::kNodeCanIds);
  auto edge_index = open_array(arrays::kEdgeIndex, {2});
  auto edge_features = open_array(arrays::kEdgeFeatures, {ef});
  auto node_offsets = open_array(arrays::kNodeOffsets);
  auto edge_offsets = open_array(arrays::kEdgeOffsets);
  auto graph_num_nodes = open_array(arrays::kGraphNumNodes);
  auto graph_num_edges = open_array(arrays::kGraphNumEdges);
  auto graph_label = open_array(arrays::kGraphLabel);
  auto graph_split = open_array(arrays::kGraphSplit);
  auto graph_file = open_array(arrays::kGraphFile);
  auto graph_attack_type = open_array(arrays::kGraphAttackType);
  auto graph_window = open_array(arrays::kGraphWindow);

  std::int64_t node_offset = 0;
  std::int64_t edge_offset = 0;
  node_offsets.writer->write_values(std::span<const std::int64_t>(&node_offset, 1));
  edge_offsets.writer->write_values(std::span<const std::int64_t>(&edge_offset, 1));

  std::vector<std::uint32_t> training_graphs;
  std::vector<std::uint32_t> training_files;  // the file of each training graph
  std::vector<std::uint8_t> training_labels;  // and its label
  std::vector<std::uint32_t> test_graphs;
  std::uint64_t graph_id = 0;
  std::vector<std::uint32_t> records;
  std::vector<std::uint32_t> keys;
  std::vector<float> floats;
  std::vector<std::int32_t> ints;
  std::vector<std::uint32_t> can_ids;
  const std::uint32_t oov = vocabulary.out_of_vocabulary_index();
  // Under any other identity the builder already wrote feature 0, and keys are raw CAN IDs.
  const bool identity_is_can_id = metadata.node_features.identity == graph::NodeIdentity::kCanId;

  for (std::size_t i = 0; i < segments.size(); ++i) {
    const SegmentSummary& segment = segments[i];
    SourceFileRecord& file = metadata.files[i];
    const bool is_train = metadata.splits.at(file.split).role == "train";
    file.first_graph = graph_id;
    file.graphs = segment.graphs;

    ChunkReader<std::uint32_t> record_reader(segment_file(segment, ".graphs"));
    record_reader.read(segment.graphs * 4, records);
    for (std::uint64_t g = 0; g < segment.graphs; ++g) {
      const std::uint32_t nodes = records[4 * g];
      const std::uint32_t edges = records[4 * g + 1];
      const std::uint32_t window = records[4 * g + 2];
      const auto label = static_cast<std::uint8_t>(records[4 * g + 3]);
      const auto split = static_cast<std::uint16_t>(file.split);
      const auto file_index = static_cast<std::uint32_t>(i);
      const auto attack = static_cast<std::uint16_t>(file.attack_type);
      node_offset += nodes;
      edge_offset += edges;
      graph_num_nodes.writer->write_values(std::span<const std::uint32_t>(&nodes, 1));
      graph_num_edges.writer->write_values(std::span<const std::uint32_t>(&edges, 1));
      graph_label.writer->write_values(std::span<const std::uint8_t>(&label, 1));
      graph_split.writer->write_values(std::span<const std::uint16_t>(&split, 1));
      graph_file.writer->write_values(std::span<const std::uint32_t>(&file_index, 1));
      graph_attack_type.writer->write_values(std::span<const std::uint16_t>(&attack, 1));
      graph_window.writer->write_values(std::span<const std::uint32_t>(&window, 1));
      node_offsets.writer->write_values(std::span<const std::int64_t>(&node_offset, 1));
      edge_offsets.writer->write_values(std::span<const std::int64_t>(&edge_offset, 1));
      (is_train ? training_graphs : test_graphs).push_back(static_cast<std::uint32_t>(graph_id));
      if (is_train) {
        training_files.push_back(static_cast<std::uint32_t>(i));
        training_labels.push_back(label);
      }
      ++graph_id;
    }

    if (segment.graphs > 0 && segment.node_feature_count != nf)
      throw std::invalid_argument("segment " + segment.prefix.string() + " has " +
                                  std::to_string(segment.node_feature_count) +
                                  " node features, the store " + std::to_string(nf));
    // Node features: feature 0 and the CAN ID are derived from the key, the rest copied.
    ChunkReader<std::uint32_t> key_reader(segment_file(segment, ".node_keys"));
    ChunkReader<float> feature_reader(segment_file(segment, ".node_features"));
    for (std::uint64_t done = 0; done < segment.nodes;) {
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(kChunkNodes, segment.nodes - done));
      key_reader.read(n, keys);
      feature_reader.read(n * nf, floats);
      can_ids.resize(n);
      for (std::size_t k = 0; k < n; ++k) {
        std::uint32_t index = keys[k];
        if (segment.keys == SegmentKeys::kRawCanIds) {
          can_ids[k] = keys[k];
          index = vocabulary.index_of(keys[k]);
        } else {
          can_ids[k] = index < oov ? vocabulary.ids()[index] : arrays::kOutOfVocabularyCanId;
        }
        if (identity_is_can_id) floats[k * nf] = static_cast<float>(index);
      }
      node_features.writer->write_values(std::span<const float>(floats));
      node_can_ids.writer->write_values(std::span<const std::uint32_t>(can_ids));
      done += n;
    }
    {
      ChunkReader<std::int32_t> index_reader(segment_file(segment, ".edge_index"));
      ChunkReader<float> edge_feature_reader(segment_file(segment, ".edge_features"));
      for (std::uint64_t done = 0; done < segment.edges;) {
        const std::size_t n =
            static_cast<std::size_t>(std::min<std::uint64_t>(kChunkNodes, segment.edges - done));
        index_reader.read(n * 2, ints);
        edge_index.writer->write_values(std::span<const std::int32_t>(ints));
        edge_feature_reader.read(n * ef, floats);
        edge_features.writer->write_values(std::span<const float>(floats));
        done += n;
      }
    }
    // Only the builder's own scratch segments go; a store part's stay until the store is in place.
    discard_segment(segment);
  }

  const auto split =
      metadata.validation_by == "files"
          ? split_train_validation_by_file(training_graphs, training_files, training_labels,
                                           metadata.validation_fraction, metadata.validation_seed)
          : split_train_validation(training_graphs, metadata.validation_fraction,
                                   metadata.validation_seed);
  auto split_train = open_array(arrays::kSplitTrain);
  auto split_validation = open_array(arrays::kSplitValidation);
  auto split_test = open_array(arrays::kSplitTest);
  split_train.writer->write_values(std::span<const std::uint32_t>(split.train));
  split_validation.writer->write_values(std::span<const std::uint32_t>(split.validation));
  split_test.writer->write_values(std::span<const std::uint32_t>(test_graphs));

  metadata.num_graphs = graph_id;
  metadata.num_nodes = static_cast<std::uint64_t>(node_offset);
  metadata.num_edges = static_cast<std::uint64_t>(edge_offset);
  metadata.vocabulary.assign(vocabulary.ids().begin(), vocabulary.ids().end());
  metadata.arrays.clear();
  node_features.rows_of_no_elements = metadata.num_nodes;
  edge_features.rows_of_no_elements = metadata.num_edges;
  for (ArrayOutput* out :
       {&node_features, &node_can_ids, &edge_index, &edge_features, &node_offsets, &edge_offsets,
        &graph_num_nodes, &graph_num_edges, &graph_label, &graph_split, &graph_file,
        &graph_attack_type, &graph_window, &split_train, &split_validation, &split_test}) {
    metadata.arrays.emplace(std::string(out->spec.name), out->finish());
  }

  // The manifest is the commit record: written last, and a store without it never opens.
  util::write_file_atomically(temporary_directory() / kManifestFileName, render_manifest(metadata));
  std::error_code ec;
  if (!overwrite_ && std::filesystem::exists(std::filesystem::symlink_status(store_path_, ec))) {
    throw std::runtime_error(fmt::format("store '{}' already exists (use --force to replace it)",
                                         util::printable_path(store_path_)));
  }
  // Checks the path again (it may have changed while the store was being built), then swaps old
  // and new in one step, so the path always holds a complete store.
  staged_->commit();
}

}  // namespace headroom::store
