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

namespace {

ArrayOutput open_array(const std::filesystem::path& directory, std::string_view name,
                       std::vector<std::uint64_t> trailing = {}) {
  const arrays::ArraySpec& spec = arrays::spec_of(name);
  ArrayOutput out{spec, std::move(trailing), nullptr};
  out.writer = std::make_unique<util::ChecksummedFileWriter>(
      directory / (std::string(spec.name) + std::string(spec.file_suffix)));
  return out;
}

template <typename T>
void write_one(ArrayOutput& out, const T& value) {
  out.writer->write_values(std::span<const T>(&value, 1));
}

// The store's per-graph, per-node and per-edge arrays, filled segment after segment.
struct GraphArrays {
  GraphArrays(const std::filesystem::path& directory, std::uint64_t node_feature_count,
              std::uint64_t edge_feature_count)
      : node_features(open_array(directory, arrays::kNodeFeatures, {node_feature_count})),
        node_can_ids(open_array(directory, arrays::kNodeCanIds)),
        edge_index(open_array(directory, arrays::kEdgeIndex, {2})),
        edge_features(open_array(directory, arrays::kEdgeFeatures, {edge_feature_count})),
        node_offsets(open_array(directory, arrays::kNodeOffsets)),
        edge_offsets(open_array(directory, arrays::kEdgeOffsets)),
        graph_num_nodes(open_array(directory, arrays::kGraphNumNodes)),
        graph_num_edges(open_array(directory, arrays::kGraphNumEdges)),
        graph_label(open_array(directory, arrays::kGraphLabel)),
        graph_split(open_array(directory, arrays::kGraphSplit)),
        graph_file(open_array(directory, arrays::kGraphFile)),
        graph_attack_type(open_array(directory, arrays::kGraphAttackType)),
        graph_window(open_array(directory, arrays::kGraphWindow)) {
    write_one(node_offsets, node_offset);
    write_one(edge_offsets, edge_offset);
  }

  ArrayOutput node_features, node_can_ids, edge_index, edge_features, node_offsets, edge_offsets,
      graph_num_nodes, graph_num_edges, graph_label, graph_split, graph_file, graph_attack_type,
      graph_window;
  std::int64_t node_offset = 0;  // nodes and edges written so far
  std::int64_t edge_offset = 0;
  std::uint32_t graphs = 0;

  std::vector<ArrayOutput*> all() {
    return {&node_features, &node_can_ids,      &edge_index,      &edge_features, &node_offsets,
            &edge_offsets,  &graph_num_nodes,   &graph_num_edges, &graph_label,   &graph_split,
            &graph_file,    &graph_attack_type, &graph_window};
  }
};

// Which graphs the splits draw from: the training files' graphs (with their file and label, for a
// split by files) and the test graphs.
struct SplitMembers {
  std::vector<std::uint32_t> training_graphs;
  std::vector<std::uint32_t> training_files;  // the file of each training graph
  std::vector<std::uint8_t> training_labels;  // and its label
  std::vector<std::uint32_t> test_graphs;
};

// A segment's graph records (nodes, edges, window, label) become one row of every per-graph array.
void append_graph_rows(const SegmentSummary& segment, std::uint32_t file_index,
                       const SourceFileRecord& file, bool is_train, GraphArrays& out,
                       SplitMembers& members) {
  std::vector<std::uint32_t> records;
  ChunkReader<std::uint32_t> record_reader(segment_file(segment, ".graphs"));
  record_reader.read(segment.graphs * 4, records);
  const auto split = static_cast<std::uint16_t>(file.split);
  const auto attack = static_cast<std::uint16_t>(file.attack_type);
  for (std::uint64_t g = 0; g < segment.graphs; ++g) {
    const std::uint32_t nodes = records[4 * g];
    const std::uint32_t edges = records[4 * g + 1];
    const std::uint32_t window = records[4 * g + 2];
    const auto label = static_cast<std::uint8_t>(records[4 * g + 3]);
    out.node_offset += nodes;
    out.edge_offset += edges;
    write_one(out.graph_num_nodes, nodes);
    write_one(out.graph_num_edges, edges);
    write_one(out.graph_label, label);
    write_one(out.graph_split, split);
    write_one(out.graph_file, file_index);
    write_one(out.graph_attack_type, attack);
    write_one(out.graph_window, window);
    write_one(out.node_offsets, out.node_offset);
    write_one(out.edge_offsets, out.edge_offset);
    (is_train ? members.training_graphs : members.test_graphs).push_back(out.graphs);
    if (is_train) {
      members.training_files.push_back(file_index);
      members.training_labels.push_back(label);
    }
    ++out.graphs;
  }
}

// A segment's node rows: feature 0 and the CAN ID derived from the node's key, the other features
// copied. Under any identity but the CAN ID the builder already wrote feature 0.
void append_node_rows(const SegmentSummary& segment, const StoreMetadata& metadata,
                      const graph::CanIdVocabulary& vocabulary, GraphArrays& out) {
  const std::uint64_t nf = metadata.node_feature_count;
  if (segment.graphs > 0 && segment.node_feature_count != nf)
    throw std::invalid_argument("segment " + segment.prefix.string() + " has " +
                                std::to_string(segment.node_feature_count) +
                                " node features, the store " + std::to_string(nf));
  const std::uint32_t oov = vocabulary.out_of_vocabulary_index();
  const bool identity_is_can_id = metadata.node_features.identity == graph::NodeIdentity::kCanId;
  std::vector<std::uint32_t> keys;
  std::vector<float> features;
  std::vector<std::uint32_t> can_ids;
  ChunkReader<std::uint32_t> key_reader(segment_file(segment, ".node_keys"));
  ChunkReader<float> feature_reader(segment_file(segment, ".node_features"));
  for (std::uint64_t done = 0; done < segment.nodes;) {
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(kChunkNodes, segment.nodes - done));
    key_reader.read(n, keys);
    feature_reader.read(n * nf, features);
    can_ids.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      std::uint32_t index = keys[k];
      if (segment.keys == SegmentKeys::kRawCanIds) {
        can_ids[k] = keys[k];
        index = vocabulary.index_of(keys[k]);
      } else {
        can_ids[k] = index < oov ? vocabulary.ids()[index] : arrays::kOutOfVocabularyCanId;
      }
      if (identity_is_can_id) features[k * nf] = static_cast<float>(index);
    }
    out.node_features.writer->write_values(std::span<const float>(features));
    out.node_can_ids.writer->write_values(std::span<const std::uint32_t>(can_ids));
    done += n;
  }
}

// A segment's edge rows, copied.
void append_edge_rows(const SegmentSummary& segment, std::uint64_t edge_feature_count,
                      GraphArrays& out) {
  std::vector<std::int32_t> ends;
  std::vector<float> features;
  ChunkReader<std::int32_t> index_reader(segment_file(segment, ".edge_index"));
  ChunkReader<float> feature_reader(segment_file(segment, ".edge_features"));
  for (std::uint64_t done = 0; done < segment.edges;) {
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(kChunkNodes, segment.edges - done));
    index_reader.read(n * 2, ends);
    out.edge_index.writer->write_values(std::span<const std::int32_t>(ends));
    feature_reader.read(n * edge_feature_count, features);
    out.edge_features.writer->write_values(std::span<const float>(features));
    done += n;
  }
}

TrainValidationSplit validation_split(const StoreMetadata& metadata, const SplitMembers& members) {
  if (metadata.validation_by == kGivenValidation) {
    TrainValidationSplit split;
    for (std::size_t k = 0; k < members.training_graphs.size(); ++k) {
      const auto& file = metadata.files.at(members.training_files[k]);
      const bool given = metadata.splits.at(file.split).name == kGivenValidationSplit;
      (given ? split.validation : split.train).push_back(members.training_graphs[k]);
    }
    return split;  // ascending: graphs were numbered in this order
  }
  if (metadata.validation_by == "files")
    return split_train_validation_by_file(members.training_graphs, members.training_files,
                                          members.training_labels, metadata.validation_fraction,
                                          metadata.validation_seed);
  return split_train_validation(members.training_graphs, metadata.validation_fraction,
                                metadata.validation_seed);
}

}  // namespace

void StoreBuilder::commit(StoreMetadata metadata, const std::vector<SegmentSummary>& segments,
                          const graph::CanIdVocabulary& vocabulary) {
  if (segments.size() != metadata.files.size()) {
    throw std::invalid_argument("one segment per source file expected");
  }
  GraphArrays arrays_out(temporary_directory(), metadata.node_feature_count,
                         metadata.edge_feature_count);
  SplitMembers members;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const SegmentSummary& segment = segments[i];
    SourceFileRecord& file = metadata.files[i];
    file.first_graph = arrays_out.graphs;
    file.graphs = segment.graphs;
    append_graph_rows(segment, static_cast<std::uint32_t>(i), file,
                      metadata.splits.at(file.split).role == "train", arrays_out, members);
    append_node_rows(segment, metadata, vocabulary, arrays_out);
    append_edge_rows(segment, metadata.edge_feature_count, arrays_out);
    // Only the builder's own scratch segments go; a store part's stay until the store is in place.
    discard_segment(segment);
  }

  const auto split = validation_split(metadata, members);
  auto split_train = open_array(temporary_directory(), arrays::kSplitTrain);
  auto split_validation = open_array(temporary_directory(), arrays::kSplitValidation);
  auto split_test = open_array(temporary_directory(), arrays::kSplitTest);
  split_train.writer->write_values(std::span<const std::uint32_t>(split.train));
  split_validation.writer->write_values(std::span<const std::uint32_t>(split.validation));
  split_test.writer->write_values(std::span<const std::uint32_t>(members.test_graphs));

  metadata.num_graphs = arrays_out.graphs;
  metadata.num_nodes = static_cast<std::uint64_t>(arrays_out.node_offset);
  metadata.num_edges = static_cast<std::uint64_t>(arrays_out.edge_offset);
  metadata.vocabulary.assign(vocabulary.ids().begin(), vocabulary.ids().end());
  // Only the optional arrays' records stay: those the caller wrote itself (a geometric store's).
  std::erase_if(metadata.arrays, [](const auto& entry) {
    const auto& specs = arrays::kArraySpecs;
    const auto spec = std::find_if(specs.begin(), specs.end(),
                                   [&](const auto& s) { return s.name == entry.first; });
    return spec == specs.end() || !spec->optional;
  });
  arrays_out.node_features.rows_of_no_elements = metadata.num_nodes;
  arrays_out.edge_features.rows_of_no_elements = metadata.num_edges;
  auto outputs = arrays_out.all();
  outputs.insert(outputs.end(), {&split_train, &split_validation, &split_test});
  for (ArrayOutput* out : outputs)
    metadata.arrays.emplace(std::string(out->spec.name), out->finish());

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
