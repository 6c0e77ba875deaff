// A store whose checksums are right but whose values are wrong, as another tool (or a buggy
// writer) could leave it: every such corruption is an error naming the store, the array and the
// graph, before any tensor is built from it. Each test corrupts a fresh copy of a real store built
// from synthetic traffic, and updates the manifest's checksums so that only the value checks can
// catch it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "headroom/loader/collate.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/store/store_arrays.hpp"
#include "headroom/store/store_error.hpp"
#include "headroom/store/store_metadata.hpp"
#include "headroom/util/file_writer.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

namespace fs = std::filesystem;

class CorruptStore : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pristine_dir_ = std::make_unique<testing::TempDir>();
    testing::build_synthetic_store(pristine_dir_->path(), 20'000, 3);
  }
  static void TearDownTestSuite() { pristine_dir_.reset(); }

  void SetUp() override {
    fs::copy(pristine_dir_->path() / "store", store_path(), fs::copy_options::recursive);
  }

  fs::path store_path() const { return dir_ / "store"; }

  // Overwrites element `index` of `array` with `value`, then records the array's new checksum in
  // the manifest (and the manifest's own), as a writer that got the values wrong would.
  template <typename T>
  void overwrite(std::string_view array, std::size_t index, T value) {
    ASSERT_EQ(sizeof(T), store::arrays::spec_of(array).element_bytes);
    const auto file = store_path() /
                      (std::string(array) + std::string(store::arrays::spec_of(array).file_suffix));
    {
      std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
      ASSERT_TRUE(f) << file;
      f.seekp(static_cast<std::streamoff>(index * sizeof(T)));
      f.write(reinterpret_cast<const char*>(&value), sizeof(T));
    }
    const auto manifest = store_path() / store::kManifestFileName;
    std::ifstream in(manifest);
    std::stringstream text;
    text << in.rdbuf();
    auto metadata = store::parse_manifest(text.str(), manifest.string());
    metadata.arrays.at(std::string(array)).xxh3 = util::checksum_hex(util::checksum_file(file));
    util::write_file_atomically(manifest, store::render_manifest(metadata));
  }

  template <typename T>
  T element(std::string_view array, std::size_t index) const {
    const auto store = store::GraphStore::open(store_path());
    T value;
    std::memcpy(&value, store.array(array)->bytes().data() + index * sizeof(T), sizeof(T));
    return value;
  }

  // A graph with at least one edge, not the first (so that local and global rows differ).
  std::size_t graph_with_edges() const {
    const auto store = store::GraphStore::open(store_path());
    for (std::size_t g = 1; g < store.num_graphs(); ++g)
      if (store.graph(g).num_edges() > 0) return g;
    ADD_FAILURE() << "no graph with edges";
    return 0;
  }

  std::vector<std::uint32_t> every_graph() const {
    std::vector<std::uint32_t> ids(store::GraphStore::open(store_path()).num_graphs());
    std::iota(ids.begin(), ids.end(), 0U);
    return ids;
  }

  // The message of the StoreError that `fn` throws ("" and a failure when it throws none).
  template <typename Fn>
  static std::string store_error(Fn&& fn) {
    try {
      fn();
    } catch (const store::StoreError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no StoreError";
    return "";
  }

  // Collating every graph fails before any tensor is built; a full verification fails the same.
  void expect_collate_and_verify_name(std::string_view array, std::size_t graph,
                                      std::string_view detail,
                                      loader::CollateOptions options = {}) {
    const auto store = store::GraphStore::open(store_path());  // cheap checks pass: values only
    const auto ids = every_graph();
    const std::string collate_error = store_error([&] { loader::collate(store, ids, options); });
    const std::string verify_error = store_error(
        [&] { store::GraphStore::open(store_path(), store::StoreVerification::kFull); });
    for (const auto& message : {collate_error, verify_error}) {
      EXPECT_NE(message.find(store_path().string()), std::string::npos) << message;
      EXPECT_NE(message.find(fmt::format("array '{}'", array)), std::string::npos) << message;
      EXPECT_NE(message.find(fmt::format("graph {}:", graph)), std::string::npos) << message;
      EXPECT_NE(message.find(detail), std::string::npos) << message;
    }
  }

  void expect_open_names(std::string_view array, std::string_view where) {
    const std::string message = store_error([&] { store::GraphStore::open(store_path()); });
    EXPECT_NE(message.find(store_path().string()), std::string::npos) << message;
    EXPECT_NE(message.find(fmt::format("array '{}'", array)), std::string::npos) << message;
    EXPECT_NE(message.find(where), std::string::npos) << message;
  }

  // First edge row and node row of graph g, from the offsets.
  std::int64_t first_edge(std::size_t g) const {
    return element<std::int64_t>(store::arrays::kEdgeOffsets, g);
  }
  std::int64_t first_node(std::size_t g) const {
    return element<std::int64_t>(store::arrays::kNodeOffsets, g);
  }

  static inline std::unique_ptr<testing::TempDir> pristine_dir_;
  testing::TempDir dir_;
};

TEST_F(CorruptStore, IntactStoreCollatesAndVerifies) {
  const auto store = store::GraphStore::open(store_path(), store::StoreVerification::kFull);
  const auto batch = loader::collate(store, every_graph(), {.edge_features = true});
  EXPECT_EQ(batch.num_graphs, static_cast<std::int64_t>(store.num_graphs()));
}

TEST_F(CorruptStore, EdgePastItsGraphIsNamed) {
  const std::size_t g = graph_with_edges();
  const auto nodes = store::GraphStore::open(store_path()).graph(g).num_nodes();
  // The target of the graph's second edge points at the next graph's first node: a valid row of
  // the batch, so that without the check it would train silently on a wrong graph.
  const auto edge = static_cast<std::size_t>(first_edge(g)) + 1;
  overwrite<std::int32_t>(store::arrays::kEdgeIndex, 2 * edge + 1,
                          static_cast<std::int32_t>(nodes));
  expect_collate_and_verify_name(store::arrays::kEdgeIndex, g,
                                 fmt::format("edge 1 has target node {}", nodes));
}

// The run that used to end with exit 0 and a changed loss.
TEST_F(CorruptStore, TrainingStopsWithTheStoreArrayAndGraph) {
  const std::size_t g = graph_with_edges();
  const auto nodes = store::GraphStore::open(store_path()).graph(g).num_nodes();
  overwrite<std::int32_t>(store::arrays::kEdgeIndex,
                          2 * static_cast<std::size_t>(first_edge(g)) + 1,
                          static_cast<std::int32_t>(nodes));
  std::string output;
  EXPECT_EQ(testing::run_command(
                fmt::format("{} normal --store '{}' --runs-dir '{}' --preset "
                            "gat,student --max-epochs 1 --threads 1 --progress "
                            "false",
                            HEADROOM_BINARY, store_path().string(), (dir_ / "runs").string()),
                &output),
            1)
      << output;
  EXPECT_NE(output.find(fmt::format("{}: array 'edge_index' of graph {}: edge 0 has target node",
                                    store_path().string(), g)),
            std::string::npos)
      << output;
}

TEST_F(CorruptStore, NegativeEdgeIndexIsNamed) {
  const std::size_t g = graph_with_edges();
  overwrite<std::int32_t>(store::arrays::kEdgeIndex, 2 * static_cast<std::size_t>(first_edge(g)),
                          -1);
  expect_collate_and_verify_name(store::arrays::kEdgeIndex, g, "edge 0 has source node -1");
}

TEST_F(CorruptStore, IdentityPastTheVocabularyIsNamed) {
  const std::size_t g = graph_with_edges();
  const auto store = store::GraphStore::open(store_path());
  const auto vocabulary = store.metadata().vocabulary.size();
  const std::size_t width = store.metadata().node_feature_count;
  const auto row = static_cast<std::size_t>(first_node(g)) + 2;
  overwrite<float>(store::arrays::kNodeFeatures, row * width, static_cast<float>(vocabulary + 1));
  expect_collate_and_verify_name(store::arrays::kNodeFeatures, g,
                                 fmt::format("node 2 has identity {} (feature 0), not a whole "
                                             "number in [0, {}] (node identity can-id)",
                                             vocabulary + 1, vocabulary));
}

TEST_F(CorruptStore, NonFiniteNodeFeatureIsNamed) {
  const std::size_t g = graph_with_edges();
  const std::size_t width = store::GraphStore::open(store_path()).metadata().node_feature_count;
  const auto row = static_cast<std::size_t>(first_node(g)) + 1;
  overwrite<float>(store::arrays::kNodeFeatures, row * width + 4,
                   std::numeric_limits<float>::quiet_NaN());
  expect_collate_and_verify_name(store::arrays::kNodeFeatures, g, "row 1 column 4 is nan");
}

TEST_F(CorruptStore, NonFiniteEdgeFeatureIsNamedWhereEdgeFeaturesAreRead) {
  const std::size_t g = graph_with_edges();
  const std::size_t width = store::GraphStore::open(store_path()).metadata().edge_feature_count;
  const auto row = static_cast<std::size_t>(first_edge(g));
  overwrite<float>(store::arrays::kEdgeFeatures, row * width + 2,
                   -std::numeric_limits<float>::infinity());
  expect_collate_and_verify_name(store::arrays::kEdgeFeatures, g, "row 0 column 2 is -inf",
                                 {.edge_features = true});
  // Models that never read edge features are not stopped by them.
  const auto store = store::GraphStore::open(store_path());
  EXPECT_NO_THROW(loader::collate(store, every_graph(), {.edge_features = false}));
}

TEST_F(CorruptStore, OffsetsThatGoBackAreCaughtAtOpen) {
  const std::size_t g = graph_with_edges();
  overwrite<std::int64_t>(store::arrays::kNodeOffsets, g + 1, first_node(g) - 1);
  expect_open_names(store::arrays::kNodeOffsets, fmt::format("of graph {}:", g));
}

TEST_F(CorruptStore, EdgeOffsetsPastTheEdgeArrayAreCaughtAtOpen) {
  const auto graphs = store::GraphStore::open(store_path()).num_graphs();
  overwrite<std::int64_t>(store::arrays::kEdgeOffsets, graphs, first_edge(graphs) + 1000);
  expect_open_names(store::arrays::kEdgeOffsets, "disagree with 'graph_num_edges'");
}

TEST_F(CorruptStore, SizeIndexAndSplitEntriesOutOfRangeAreCaughtAtOpen) {
  overwrite<std::uint16_t>(store::arrays::kGraphSplit, 3, 999);
  expect_open_names(store::arrays::kGraphSplit, "row 3: 999 is not below");
}

TEST_F(CorruptStore, SplitListPastTheGraphCountIsCaughtAtOpen) {
  const auto graphs = store::GraphStore::open(store_path()).num_graphs();
  overwrite<std::uint32_t>(store::arrays::kSplitTrain, 0, static_cast<std::uint32_t>(graphs));
  expect_open_names(store::arrays::kSplitTrain, "row 0:");
}

TEST_F(CorruptStore, StorePathIsEscapedInErrors) {
  const fs::path odd = dir_ / "odd\x1b[31m\nstore";
  fs::rename(store_path(), odd);
  fs::remove(odd / store::kManifestFileName);
  const std::string message = store_error([&] { store::GraphStore::open(odd); });
  EXPECT_NE(message.find("odd\\x1B[31m\\x0Astore"), std::string::npos) << message;
  for (const char c : message) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20) << message;
}

}  // namespace
}  // namespace headroom
