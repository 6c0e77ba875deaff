// headroom import-graphs: graph tables written by pyarrow (tests/graph_tables/
// graph_table_fixtures.py) read back exactly from the store, across row groups and record
// batches; bad tables refused naming the file, the row and the column, with no store left.
#include "headroom/graph_tables/import_graph_tables.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "headroom/store/graph_store.hpp"
#include "headroom/store/store_metadata.hpp"
#include "headroom/util/input_error.hpp"
#include "test_support.hpp"

namespace headroom::graph_tables {
namespace {

namespace fs = std::filesystem;
using headroom::testing::run_command;
using headroom::testing::TempDir;

class ImportGraphTablesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    std::string output;
    const int status = run_command(std::string(HEADROOM_PYTHON) + " " + HEADROOM_SOURCE_DIR +
                                       "/tests/graph_tables/graph_table_fixtures.py " +
                                       (*dir_ / "tables").string(),
                                   &output);
    ASSERT_EQ(status, 0) << output;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static fs::path tables(const std::string& name) { return *dir_ / "tables" / name; }
  fs::path store_path(const std::string& name) const { return out_ / name; }

  // The error importing `name` raises; the store must not exist afterwards.
  util::InputError refused(const std::string& name) {
    try {
      import_graph_tables(tables(name), store_path(name), {});
    } catch (const util::InputError& e) {
      EXPECT_FALSE(fs::exists(store_path(name))) << name;
      return e;
    }
    ADD_FAILURE() << name << " was imported";
    return util::InputError("", 0, "", "");
  }

  static TempDir* dir_;
  TempDir out_;
};

TempDir* ImportGraphTablesTest::dir_ = nullptr;

// The store holds the training graphs first, then the test graphs, each in table order.
std::vector<std::size_t> store_order(const nlohmann::json& graphs) {
  std::vector<std::size_t> order;
  for (const char* split : {"train", "test"})
    for (std::size_t g = 0; g < graphs.size(); ++g)
      if (graphs[g]["split"] == split) order.push_back(g);
  return order;
}

TEST_F(ImportGraphTablesTest, EveryGraphReadsBackExactlyAcrossRowGroupsAndBatches) {
  const auto expected = nlohmann::json::parse(std::ifstream(tables("shapes") / "expected.json"));
  ImportOptions options;
  options.identity_classes = 3;  // column "kind"
  options.batch_rows = 7;        // batches and row groups (17 rows) end mid-graph
  options.validation_fraction = 0.25;
  const ImportSummary summary = import_graph_tables(tables("shapes"), store_path("s"), options);
  EXPECT_EQ(summary.graphs, 25U);
  EXPECT_EQ(summary.test_graphs, 5U);
  EXPECT_EQ(summary.node_features, 3U);
  EXPECT_EQ(summary.edge_features, 1U);

  const auto store = store::GraphStore::open(store_path("s"), store::StoreVerification::kFull);
  ASSERT_EQ(store.num_graphs(), 25U);
  EXPECT_EQ(store::identity_classes(store.metadata()), 3U);
  const auto order = store_order(expected);
  std::uint64_t nodes = 0;
  for (std::size_t id = 0; id < order.size(); ++id) {
    const auto& graph = expected[order[id]];
    const auto view = store.graph(id);
    SCOPED_TRACE(::testing::Message() << "store graph " << id << " = table graph " << order[id]);
    EXPECT_EQ(view.label, graph["label"].get<int>());
    ASSERT_EQ(view.num_nodes(), graph["x"].size());
    nodes += view.num_nodes();
    for (std::size_t i = 0; i < view.num_nodes(); ++i)
      for (std::size_t f = 0; f < 3; ++f)
        EXPECT_EQ(view.node_features[i * 3 + f], graph["x"][i][f].get<float>());
    ASSERT_EQ(view.num_edges(), graph["edges"].size());
    for (std::size_t k = 0; k < view.num_edges(); ++k) {
      EXPECT_EQ(view.edge_index[2 * k], graph["edges"][k][0].get<int>());
      EXPECT_EQ(view.edge_index[2 * k + 1], graph["edges"][k][1].get<int>());
      EXPECT_EQ(view.edge_features[k], graph["edge_attr"][k][0].get<float>());
    }
  }
  EXPECT_EQ(nodes, summary.nodes);
  EXPECT_EQ(store.test_ids().size(), 5U);
  EXPECT_EQ(store.validation_ids().size(), 5U);
}

// Without --identity-classes every node is one class: a zero column comes before the features.
// Without a split column every graph trains; without edge feature columns edges have none.
TEST_F(ImportGraphTablesTest, DefaultsGiveAConstantIdentityAndTrainingGraphsOnly) {
  const ImportSummary summary = import_graph_tables(tables("no_split"), store_path("p"), {});
  EXPECT_EQ(summary.node_features, 2U);
  EXPECT_EQ(summary.edge_features, 0U);
  EXPECT_EQ(summary.test_graphs, 0U);
  const auto store = store::GraphStore::open(store_path("p"), store::StoreVerification::kFull);
  EXPECT_EQ(store::identity_classes(store.metadata()), 1U);
  EXPECT_TRUE(store.test_ids().empty());
  const auto view = store.graph(1);
  ASSERT_EQ(view.num_nodes(), 6U);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(view.node_features[2 * i], 0.0F);
    EXPECT_EQ(view.node_features[2 * i + 1], 0.25F * static_cast<float>(i) + 1.0F);
  }
  EXPECT_TRUE(view.edge_features.empty());
  EXPECT_EQ(view.num_edges(), 10U);
}

struct BadTable {
  std::string name;
  std::string file;
  std::uint64_t row;
  std::string column;
  std::string reason;
};

TEST_F(ImportGraphTablesTest, BadTablesAreRefusedNamingFileRowAndColumn) {
  const std::vector<BadTable> cases = {
      {"label_two", "graphs.parquet", 2, "label", "label 2 is neither attack (1) nor normal (0)"},
      {"split_dev", "graphs.parquet", 3, "split", "split 'dev' is neither train nor test"},
      {"unsorted_nodes", "nodes.parquet", 6, "graph",
       "graph 0 is out of order: graph 1 is being read, and rows must be grouped by graph in "
       "increasing order (sort the table by graph)"},
      {"graph_beyond", "nodes.parquet", 12, "graph",
       "graph 7 is not in graphs.parquet, which has 3 rows"},
      {"no_nodes", "nodes.parquet", 4, "graph",
       "graph 1 (row 2 of graphs.parquet) has no nodes; every graph needs one (this row is of "
       "graph 2; rows are grouped by graph in increasing order)"},
      {"target_outside", "edges.parquet", 5, "target",
       "node 9 is outside graph 1, which has 6 nodes"},
      {"negative_source", "edges.parquet", 3, "source", "-1 is negative"},
      {"null_feature", "nodes.parquet", 7, "mass", "value is null"},
      {"nan_feature", "nodes.parquet", 10, "mass", "nan is not a finite 32-bit float"},
      {"huge_feature", "nodes.parquet", 1, "mass", "1e+300 is not a finite 32-bit float"},
      {"string_feature", "nodes.parquet", 0, "kind",
       "column has type string, expected a number (float, double, integer or boolean)"},
      {"missing_edges", "edges.parquet", 0, "", "cannot open file: No such file or directory"},
  };
  for (const BadTable& c : cases) {
    SCOPED_TRACE(c.name);
    const util::InputError e = refused(c.name);
    EXPECT_EQ(e.file(), tables(c.name) / c.file);
    EXPECT_EQ(e.line(), c.row);
    EXPECT_EQ(e.column(), c.column);
    EXPECT_EQ(e.reason(), c.reason);
  }
}

// pos_x/pos_y/pos_z and parent are no features: they become a geometric store's positions and
// parents (fixture "trees": node i of graph g at (0.5 i, g, -0.25 i), parent (i - 1) / 2).
TEST_F(ImportGraphTablesTest, PositionAndParentColumnsMakeAGeometricStore) {
  import_graph_tables(tables("trees"), store_path("trees"), {.require_positions = true});
  const auto store = store::GraphStore::open(store_path("trees"), store::StoreVerification::kFull);
  EXPECT_EQ(store.metadata().position_dimensions, 3U);
  EXPECT_TRUE(store.metadata().has_parents);
  EXPECT_EQ(store.metadata().node_feature_count, 4U);  // identity, kind, mass, flag
  ASSERT_EQ(store.num_graphs(), 3U);
  for (std::size_t g = 0; g < 3; ++g) {
    const auto view = store.graph(g);
    ASSERT_EQ(view.positions.size(), 3 * view.num_nodes());
    for (std::size_t i = 0; i < view.num_nodes(); ++i) {
      EXPECT_EQ(view.positions[3 * i], 0.5F * static_cast<float>(i));
      EXPECT_EQ(view.positions[3 * i + 1], static_cast<float>(g));
      EXPECT_EQ(view.positions[3 * i + 2], -0.25F * static_cast<float>(i));
      EXPECT_EQ(view.parents[i], i == 0 ? -1 : static_cast<std::int32_t>((i - 1) / 2));
    }
  }
  EXPECT_EQ(store.size_index().num_paths.size(), 3U * 3U);
  import_graph_tables(tables("trees_2d"), store_path("trees_2d"), {});
  const auto flat = store::GraphStore::open(store_path("trees_2d"));
  EXPECT_EQ(flat.metadata().position_dimensions, 2U);
  EXPECT_FALSE(flat.metadata().has_parents);
  EXPECT_EQ(flat.graph(2).positions.size(), 2U * 9U);
}

TEST_F(ImportGraphTablesTest, BadGeometryIsRefusedNamingFileRowAndColumn) {
  const std::vector<BadTable> cases = {
      {"nan_position", "nodes.parquet", 5, "pos_y", "position nan is not a finite 32-bit float"},
      {"parent_cycle", "nodes.parquet", 4, "parent",
       "graph 1 node 0: following parents from it comes back to it (a cycle of 2 nodes); a "
       "tree's parents end at a root"},
      {"parent_outside", "nodes.parquet", 14, "parent",
       "graph 2 node 4: its parent 9 is outside the graph's 9 nodes (a root's parent is -1)"},
      {"pos_w", "nodes.parquet", 0, "pos_w",
       "pos_* columns are node positions: pos_x, pos_y and, for 3-D, pos_z (rename a feature that "
       "is no coordinate)"},
      {"only_pos_x", "nodes.parquet", 0, "pos_x",
       "positions need pos_x and pos_y (and pos_z for 3-D); the table has only some of them"},
      {"parent_without_positions", "nodes.parquet", 0, "parent",
       "a tree's parents are stored with its positions: add pos_x and pos_y (and pos_z)"},
  };
  for (const BadTable& c : cases) {
    SCOPED_TRACE(c.name);
    const util::InputError e = refused(c.name);
    EXPECT_EQ(e.file(), tables(c.name) / c.file);
    EXPECT_EQ(e.line(), c.row);
    EXPECT_EQ(e.column(), c.column);
    EXPECT_EQ(e.reason(), c.reason);
  }
  // --geometric: a table without positions is refused.
  try {
    import_graph_tables(tables("no_split"), store_path("no_split"), {.require_positions = true});
    ADD_FAILURE() << "a table without positions was imported under --geometric";
  } catch (const util::InputError& e) {
    EXPECT_EQ(e.file(), tables("no_split") / "nodes.parquet");
    EXPECT_EQ(e.column(), "pos_x");
    EXPECT_EQ(e.reason(),
              "--geometric needs node positions, columns pos_x and pos_y (and pos_z for 3-D); the "
              "table has none");
  }
  EXPECT_FALSE(fs::exists(store_path("no_split")));
}

TEST_F(ImportGraphTablesTest, AnIdentityThatIsNotAClassIsRefused) {
  ImportOptions options;
  options.identity_classes = 2;  // "kind" takes 0, 1 and 2
  try {
    import_graph_tables(tables("shapes"), store_path("k"), options);
    ADD_FAILURE() << "imported";
  } catch (const util::InputError& e) {
    EXPECT_EQ(e.file(), tables("shapes") / "nodes.parquet");
    EXPECT_EQ(e.line(), 3U);  // graph 0's kinds are 0, 1, 2
    EXPECT_EQ(e.column(), "kind");
    EXPECT_EQ(e.reason(),
              "the node's class (its first feature column) is 2, not a whole number in [0, 2) "
              "(--identity-classes)");
  }
  EXPECT_FALSE(fs::exists(store_path("k")));
}

// A failed import with overwrite on leaves the store it would have replaced as it was.
TEST_F(ImportGraphTablesTest, AFailedReplacementKeepsTheOldStore) {
  import_graph_tables(tables("no_split"), store_path("kept"), {});
  ImportOptions options;
  options.overwrite = true;
  EXPECT_THROW(import_graph_tables(tables("target_outside"), store_path("kept"), options),
               util::InputError);
  EXPECT_EQ(
      store::GraphStore::open(store_path("kept"), store::StoreVerification::kFull).num_graphs(),
      3U);
}

}  // namespace
}  // namespace headroom::graph_tables
