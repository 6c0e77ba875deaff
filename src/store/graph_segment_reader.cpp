#include "headroom/store/graph_segment_reader.hpp"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <system_error>

#include "headroom/store/store_error.hpp"

namespace headroom::store {
namespace {

std::filesystem::path with_suffix(const std::filesystem::path& prefix, const char* suffix) {
  auto path = prefix;
  path += suffix;
  return path;
}

// A segment file read front to back through stdio's buffer.
class SequentialFile {
 public:
  explicit SequentialFile(std::filesystem::path path)
      : path_(std::move(path)), file_(std::fopen(path_.c_str(), "rb")) {
    if (file_ == nullptr)
      throw std::system_error(errno, std::generic_category(),
                              fmt::format("cannot open '{}'", path_.string()));
    std::setvbuf(file_, nullptr, _IOFBF, 256 << 10);
  }
  ~SequentialFile() { std::fclose(file_); }
  SequentialFile(const SequentialFile&) = delete;
  SequentialFile& operator=(const SequentialFile&) = delete;

  template <typename T>
  void read(T* out, std::size_t count) {
    if (count > 0 && std::fread(out, sizeof(T), count, file_) != count)
      throw StoreError(fmt::format("segment file '{}' ends early", path_.string()));
  }

 private:
  std::filesystem::path path_;
  std::FILE* file_;
};

}  // namespace

void require_complete_segment(const SegmentSummary& segment) {
  const std::uint64_t nf = segment.node_feature_count;
  constexpr std::uint64_t ef = graph::kEdgeFeatureCount;
  const std::array<std::uint64_t, kSegmentFileSuffixes.size()> expected = {
      segment.graphs * kSegmentGraphRecordBytes, segment.nodes * 4, segment.nodes * nf * 4,
      segment.edges * 2 * 4, segment.edges * ef * 4};
  for (std::size_t k = 0; k < expected.size(); ++k) {
    const auto path = with_suffix(segment.prefix, kSegmentFileSuffixes[k]);
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) throw StoreError(fmt::format("segment file '{}' is missing", path.string()));
    if (size != expected[k])
      throw StoreError(fmt::format("segment file '{}' has {} bytes, {} expected", path.string(),
                                   size, expected[k]));
  }
}

struct GraphSegmentReader::Files {
  explicit Files(const std::filesystem::path& prefix)
      : records(with_suffix(prefix, ".graphs")),
        node_keys(with_suffix(prefix, ".node_keys")),
        node_features(with_suffix(prefix, ".node_features")),
        edge_index(with_suffix(prefix, ".edge_index")),
        edge_features(with_suffix(prefix, ".edge_features")) {}
  SequentialFile records;
  SequentialFile node_keys;
  SequentialFile node_features;
  SequentialFile edge_index;
  SequentialFile edge_features;
};

GraphSegmentReader::GraphSegmentReader(const SegmentSummary& segment)
    : segment_(segment), files_(std::make_unique<Files>(segment.prefix)) {}

GraphSegmentReader::~GraphSegmentReader() = default;

bool GraphSegmentReader::next(graph::WindowGraph& graph, std::uint32_t& window_index) {
  if (read_ == segment_.graphs) return false;
  std::array<std::uint32_t, 4> record{};  // nodes, edges, window, label
  files_->records.read(record.data(), record.size());
  const std::size_t nodes = record[0];
  const std::size_t edges = record[1];
  window_index = record[2];
  graph.label = static_cast<std::uint8_t>(record[3]);
  graph.node_keys.resize(nodes);
  graph.node_feature_count = segment_.node_feature_count;
  graph.node_features.resize(nodes * segment_.node_feature_count);
  graph.edge_index.resize(edges * 2);
  graph.edge_features.resize(edges * graph::kEdgeFeatureCount);
  files_->node_keys.read(graph.node_keys.data(), graph.node_keys.size());
  files_->node_features.read(graph.node_features.data(), graph.node_features.size());
  files_->edge_index.read(graph.edge_index.data(), graph.edge_index.size());
  files_->edge_features.read(graph.edge_features.data(), graph.edge_features.size());
  ++read_;
  return true;
}

}  // namespace headroom::store
