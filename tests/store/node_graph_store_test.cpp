#include "headroom/store/node_graph_store.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "headroom/store/node_graph_builder.hpp"
#include "headroom/store/node_graph_summary.hpp"
#include "headroom/store/store_error.hpp"
#include "headroom/store/store_ownership.hpp"
#include "headroom/util/file_reader.hpp"
#include "headroom/util/file_writer.hpp"
#include "test_support.hpp"

namespace headroom::store {
namespace {

using testing::TempDir;

// A path 0 - 1 - 2 with self-loops; node 0 a "doc" (class b, train), 1 a "doc" (class a, test),
// 2 a "word" (no label).
void build_small_store(const std::filesystem::path& path, bool overwrite = false) {
  NodeGraphStoreBuilder builder(path, overwrite);
  const std::vector<std::int64_t> offsets = {0, 2, 5, 7};
  const std::vector<std::int32_t> columns = {0, 1, 0, 1, 2, 1, 2};
  const std::vector<float> weights = {0.5F, 0.25F, 0.25F, 0.3F, 0.125F, 0.125F, 0.75F};
  builder.array(node_graph_arrays::kRowOffsets).write_values(std::span(offsets));
  builder.array(node_graph_arrays::kColumnIndex).write_values(std::span(columns));
  builder.array(node_graph_arrays::kEdgeWeight).write_values(std::span(weights));
  const std::vector<std::uint8_t> kinds = {0, 0, 1};
  const std::vector<std::int32_t> labels = {1, 0, kNoLabel};
  const std::vector<std::uint8_t> splits = {1, 3, 0};
  builder.array(node_graph_arrays::kNodeKind).write_values(std::span(kinds));
  builder.array(node_graph_arrays::kNodeLabel).write_values(std::span(labels));
  builder.array(node_graph_arrays::kNodeSplit).write_values(std::span(splits));
  // A scratch file is the builder's own and must not survive the commit.
  util::write_file_atomically(builder.scratch_path("spill"), "scratch");
  NodeGraphMetadata m;
  m.created_by = "test";
  m.source = "nowhere";
  m.num_nodes = 3;
  m.num_edges = 7;
  m.node_kinds = {"doc", "word"};
  m.classes = {"a", "b"};
  m.node_names = {"first", "second", "w\u00e9"};
  m.build = {{"summary", {"built by hand"}}};
  builder.commit(m);
}

void flip_byte(const std::filesystem::path& file, std::size_t at) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(at));
  char c = 0;
  f.get(c);
  f.seekp(static_cast<std::streamoff>(at));
  f.put(static_cast<char>(c ^ 0x5A));
}

std::string open_error(const std::filesystem::path& path, StoreVerification verification) {
  try {
    NodeGraphStore::open(path, verification);
  } catch (const StoreError& e) {
    return e.what();
  }
  return "";
}

TEST(NodeGraphStore, RoundTrip) {
  TempDir dir;
  build_small_store(dir / "store");
  const auto store = NodeGraphStore::open(dir / "store", StoreVerification::kFull);
  EXPECT_EQ(store.num_nodes(), 3U);
  EXPECT_EQ(store.num_edges(), 7U);
  EXPECT_EQ(std::vector<std::int32_t>(store.column_index().begin(), store.column_index().end()),
            (std::vector<std::int32_t>{0, 1, 0, 1, 2, 1, 2}));
  EXPECT_EQ(store.edge_weight()[3], 0.3F);
  EXPECT_EQ(store.node_label()[0], 1);
  EXPECT_EQ(store.nodes_in(NodeSplit::kTrain), (std::vector<std::uint32_t>{0}));
  EXPECT_EQ(store.nodes_in(NodeSplit::kTest), (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(store.metadata().node_names[2], "w\u00e9");
  EXPECT_EQ(store_kind_at(dir / "store"), kNodeGraphStoreKind);
  EXPECT_FALSE(std::filesystem::exists(dir / "store/scratch-spill"));
  // Recognised as headroom's, so --force may replace it...
  EXPECT_EQ(graph_store_kind().why_not_ours(dir / "store"), "");
  build_small_store(dir / "store", /*overwrite=*/true);
  // ...but not once a foreign file is in it.
  testing::write_text_file(dir / "store/notes.txt", "mine");
  EXPECT_NE(graph_store_kind().why_not_ours(dir / "store").find("notes.txt"), std::string::npos);
  EXPECT_THROW(build_small_store(dir / "store", true), std::runtime_error);
  EXPECT_EQ(util::read_file(dir / "store/notes.txt"), "mine");
}

TEST(NodeGraphStore, ViewsShareOneMapping) {
  TempDir dir;
  build_small_store(dir / "store");
  const auto store = NodeGraphStore::open(dir / "store");
  const NodeGraphStore copy = store;  // e.g. one per split
  EXPECT_EQ(copy.column_index().data(), store.column_index().data());
  EXPECT_EQ(copy.array(node_graph_arrays::kEdgeWeight).get(),
            store.array(node_graph_arrays::kEdgeWeight).get());
}

TEST(NodeGraphStore, CorruptionIsDetected) {
  TempDir dir;
  build_small_store(dir / "store");
  // A per-node array: checked on every open.
  flip_byte(dir / "store/node_label.i32", 1);
  EXPECT_NE(open_error(dir / "store", StoreVerification::kMetadata)
                .find("checksum mismatch in 'node_label.i32'"),
            std::string::npos);
  build_small_store(dir / "store", true);
  // The edge arrays: checksummed on full verification (inspect --verify).
  flip_byte(dir / "store/edge_weight.f32", 2);
  EXPECT_EQ(open_error(dir / "store", StoreVerification::kMetadata), "");
  EXPECT_NE(open_error(dir / "store", StoreVerification::kFull)
                .find("checksum mismatch in 'edge_weight.f32'"),
            std::string::npos);
  build_small_store(dir / "store", true);
  // The manifest itself.
  auto manifest = util::read_file(dir / "store/manifest.json");
  manifest.replace(manifest.find("\"first\""), 7, "\"fir5t\"");
  util::write_file_atomically(dir / "store/manifest.json", manifest);
  EXPECT_NE(
      open_error(dir / "store", StoreVerification::kMetadata).find("manifest checksum mismatch"),
      std::string::npos);
}

TEST(NodeGraphStore, ResealedImpossibleValuesAreRefused) {
  TempDir dir;
  build_small_store(dir / "store");
  // Another tool rewrites node_split with a split id of 7 and reseals everything.
  const std::vector<std::uint8_t> splits = {1, 7, 0};
  {
    util::ChecksummedFileWriter writer(dir / "store/node_split.u8");
    writer.write_values(std::span(splits));
    writer.close();
    auto manifest = unseal_manifest(util::read_file(dir / "store/manifest.json"), "m");
    manifest["arrays"]["node_split"]["xxh3"] = util::checksum_hex(writer.checksum());
    util::write_file_atomically(dir / "store/manifest.json", seal_manifest(manifest));
  }
  EXPECT_NE(
      open_error(dir / "store", StoreVerification::kMetadata).find("node 1: split id above 3"),
      std::string::npos);
  // A windows-store reader refuses the kind by name.
  try {
    GraphStore::open(dir / "store");
    FAIL();
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("a store of kind 'node-graph'"), std::string::npos)
        << e.what();
  }
}

TEST(NodeGraphStore, SummaryCountsKindsEdgesAndDegrees) {
  TempDir dir;
  build_small_store(dir / "store");
  const auto summary = summarize_node_graph(NodeGraphStore::open(dir / "store"));
  EXPECT_EQ(summary.nodes_by_kind,
            (std::vector<std::pair<std::string, std::uint64_t>>{{"doc", 2}, {"word", 1}}));
  EXPECT_EQ(summary.edges_by_kind, (std::vector<std::pair<std::string, std::uint64_t>>{
                                       {"doc-doc", 1}, {"doc-word", 1}, {"self-loop", 3}}));
  EXPECT_EQ(summary.degree_by_kind[0].second.max, 2U);  // node 1: neighbours 0 and 2
  EXPECT_EQ(summary.degree_by_kind[0].second.min, 1U);
  const std::string text = render_node_graph_summary(summary);
  EXPECT_NE(text.find("nodes      3: 2 doc, 1 word"), std::string::npos) << text;
  EXPECT_NE(
      text.find("edges      5 (7 stored, both directions): 1 doc-doc, 1 doc-word, 3 self-loop"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("degree     doc: min 1 / p50 1 / p95 1 / max 2, mean 1.5"), std::string::npos)
      << text;
  EXPECT_NE(text.find("splits     1 train, 0 validation, 1 test"), std::string::npos) << text;
  EXPECT_NE(text.find("built      built by hand"), std::string::npos) << text;
}

}  // namespace
}  // namespace headroom::store
