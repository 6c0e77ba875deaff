#include "headroom/graph_tables/import_graph_tables.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "headroom/store/graph_dataset_writer.hpp"
#include "headroom/store/node_parents.hpp"
#include "headroom/tabular/arrow_columns.hpp"
#include "headroom/tabular/parquet_table.hpp"
#include "headroom/util/input_error.hpp"

namespace headroom::graph_tables {
namespace {

using tabular::IntegerColumn;
using tabular::NumberColumn;
using tabular::ParquetTable;
using tabular::StringColumn;

constexpr const char* kKind = "a Parquet table";
constexpr std::uint64_t kProgressEvery = 1024;

// nodes.parquet's columns that are no features: a geometric store's positions and parents.
constexpr std::string_view kPositionPrefix = "pos_";
constexpr std::array<const char*, 3> kPositionColumns = {"pos_x", "pos_y", "pos_z"};
constexpr const char* kParentColumn = "parent";

bool is_geometry_column(const std::string& name) {
  return name.rfind(kPositionPrefix, 0) == 0 || name == kParentColumn;
}

// One table's rows, one at a time across its record batches; `bind` re-binds the column readers
// to each new batch.
class RowCursor {
 public:
  RowCursor(ParquetTable& table, std::function<void(const arrow::RecordBatch&)> bind)
      : table_(table), bind_(std::move(bind)) {}

  bool at_end() { return !load(); }
  std::int64_t row() const { return row_; }
  std::uint64_t row_number() const {
    return table_.rows_before_batch() + static_cast<std::uint64_t>(row_) + 1;
  }
  void advance() { ++row_; }

 private:
  bool load() {
    while (batch_ == nullptr || row_ == batch_->num_rows()) {
      if (finished_) return false;
      batch_ = table_.next_batch();
      row_ = 0;
      if (batch_ == nullptr) {
        finished_ = true;
        return false;
      }
      bind_(*batch_);
    }
    return true;
  }

  ParquetTable& table_;
  std::function<void(const arrow::RecordBatch&)> bind_;
  std::shared_ptr<arrow::RecordBatch> batch_;
  std::int64_t row_ = 0;
  bool finished_ = false;
};

// graphs.parquet: a label and, optionally, a split per row.
class GraphRows {
 public:
  GraphRows(const std::filesystem::path& file, std::size_t batch_rows)
      : table_(file, kKind, batch_rows),
        has_split_(table_.has_column("split")),
        rows_(table_, [this](const arrow::RecordBatch& batch) {
          label_.bind(*batch.GetColumnByName("label"));
          if (has_split_) split_.bind(*batch.GetColumnByName("split"));
        }) {
    table_.read_column(
        "label", [](const arrow::DataType& t) { return IntegerColumn::accepts(t, true); },
        "an integer or boolean type (1 = attack, 0 = normal)");
    if (has_split_) {
      table_.read_column(
          "split", [](const arrow::DataType& t) { return StringColumn::accepts(t); },
          "string (train or test)");
    }
    if (table_.num_rows() == 0) throw util::InputError(file, 0, "", "the table has no graphs");
  }

  std::uint64_t count() const { return table_.num_rows(); }

  // The next graph's label and split.
  std::pair<std::uint8_t, store::DatasetSplit> next() {
    if (rows_.at_end()) {
      throw util::InputError(table_.path(), 0, "",
                             "the footer promised more rows than the file holds");
    }
    const std::int64_t row = rows_.row();
    if (label_.is_null(row)) fail("label", "label is null");
    const std::int64_t label = label_.value(row);
    if (label != 0 && label != 1) {
      fail("label", fmt::format("label {} is neither attack (1) nor normal (0)", label));
    }
    auto split = store::DatasetSplit::kTrain;
    if (has_split_) {
      if (split_.is_null(row)) fail("split", "split is null");
      const std::string_view name = split_.value(row);
      if (name == "test") {
        split = store::DatasetSplit::kTest;
      } else if (name != "train") {
        fail("split", fmt::format("split '{}' is neither train nor test", name));
      }
    }
    rows_.advance();
    return {static_cast<std::uint8_t>(label), split};
  }

 private:
  [[noreturn]] void fail(const char* column, const std::string& reason) const {
    throw util::InputError(table_.path(), rows_.row_number(), column, reason);
  }

  ParquetTable table_;
  bool has_split_;
  IntegerColumn label_;
  StringColumn split_;
  RowCursor rows_;
};

// nodes.parquet or edges.parquet: rows grouped by the `graph` column, in increasing graph order,
// with integer key columns (graph first) and every other column a feature.
class GroupedRows {
 public:
  // Columns `reserve` picks are read as numbers (reserved(i), in schema order), not features.
  GroupedRows(const std::filesystem::path& file, std::size_t batch_rows,
              std::vector<std::string> keys, std::uint64_t graphs,
              const std::function<bool(const std::string&)>& reserve = {})
      : table_(file, kKind, batch_rows),
        key_names_(std::move(keys)),
        key_columns_(key_names_.size()),
        graphs_(graphs),
        rows_(table_, [this](const arrow::RecordBatch& batch) { bind(batch); }) {
    for (const auto& key : key_names_) {
      table_.read_column(
          key, [](const arrow::DataType& t) { return IntegerColumn::accepts(t, false); },
          "an integer type");
    }
    for (const auto& field : table_.schema().fields()) {
      if (std::find(key_names_.begin(), key_names_.end(), field->name()) != key_names_.end())
        continue;
      table_.read_column(
          field->name(), [](const arrow::DataType& t) { return NumberColumn::accepts(t, true); },
          "a number (float, double, integer or boolean)");
      (reserve && reserve(field->name()) ? reserved_names_ : feature_names_)
          .push_back(field->name());
    }
    feature_columns_.resize(feature_names_.size());
    reserved_columns_.resize(reserved_names_.size());
  }

  const std::vector<std::string>& reserved_names() const { return reserved_names_; }

  // Reserved column `i` of the current row; nullopt when null.
  std::optional<double> reserved(std::size_t i) const {
    if (reserved_columns_[i].is_null(rows_.row())) return std::nullopt;
    return reserved_columns_[i].value(rows_.row());
  }

  const std::filesystem::path& path() const { return table_.path(); }
  std::uint32_t features() const { return static_cast<std::uint32_t>(feature_names_.size()); }
  const std::string& feature_name(std::size_t i) const { return feature_names_[i]; }
  std::uint64_t row_number() const { return rows_.row_number(); }

  // True while the current row belongs to graph `graph`; false once its rows are over (the table
  // ended or moved on to a later graph). Rows of an earlier graph, or of a graph graphs.parquet
  // lacks, are errors.
  bool in_graph(std::uint64_t graph) {
    if (rows_.at_end()) return false;
    const std::uint64_t row_graph = key(0);
    if (row_graph >= graphs_) {
      fail(key_names_[0],
           fmt::format("graph {} is not in graphs.parquet, which has {} rows", row_graph, graphs_));
    }
    if (row_graph < graph) {
      fail(key_names_[0],
           fmt::format("graph {} is out of order: graph {} is being read, and rows must be "
                       "grouped by graph in increasing order (sort the table by graph)",
                       row_graph, graph));
    }
    return row_graph == graph;
  }

  // Key column `i` of the current row, checked not null and not negative.
  std::uint64_t key(std::size_t i) const {
    const std::int64_t row = rows_.row();
    if (key_columns_[i].is_null(row)) fail(key_names_[i], "value is null");
    const std::int64_t value = key_columns_[i].value(row);
    if (value < 0) fail(key_names_[i], fmt::format("{} is negative", value));
    return static_cast<std::uint64_t>(value);
  }

  // Feature `i` of the current row, checked not null and finite as a float.
  float feature(std::size_t i) const {
    const std::int64_t row = rows_.row();
    if (feature_columns_[i].is_null(row)) fail(feature_names_[i], "value is null");
    const double value = feature_columns_[i].value(row);
    const auto narrowed = static_cast<float>(value);
    if (!std::isfinite(narrowed)) {
      fail(feature_names_[i], fmt::format("{} is not a finite 32-bit float", value));
    }
    return narrowed;
  }

  void advance() { rows_.advance(); }

  // Graph `graph` has no rows here: at the row where they should have been, or at the end.
  [[noreturn]] void no_nodes(std::uint64_t graph) {
    const std::string reason =
        fmt::format("graph {} (row {} of graphs.parquet) has no nodes; every graph needs one",
                    graph, graph + 1);
    if (rows_.at_end()) throw util::InputError(table_.path(), 0, "", reason + " (the table ended)");
    fail(key_names_[0], fmt::format("{} (this row is of graph {}; rows are grouped by graph in "
                                    "increasing order)",
                                    reason, key(0)));
  }

  // After the last graph: every row must have been consumed.
  void expect_end() {
    if (!rows_.at_end()) in_graph(graphs_);  // throws: the row names a graph past the last
  }

  [[noreturn]] void fail(const std::string& column, const std::string& reason) const {
    throw util::InputError(table_.path(), rows_.row_number(), column, reason);
  }

 private:
  void bind(const arrow::RecordBatch& batch) {
    for (std::size_t i = 0; i < key_names_.size(); ++i)
      key_columns_[i].bind(*batch.GetColumnByName(key_names_[i]));
    for (std::size_t i = 0; i < feature_names_.size(); ++i)
      feature_columns_[i].bind(*batch.GetColumnByName(feature_names_[i]));
    for (std::size_t i = 0; i < reserved_names_.size(); ++i)
      reserved_columns_[i].bind(*batch.GetColumnByName(reserved_names_[i]));
  }

  ParquetTable table_;
  std::vector<std::string> key_names_;
  std::vector<IntegerColumn> key_columns_;
  std::vector<std::string> feature_names_;
  std::vector<NumberColumn> feature_columns_;
  std::vector<std::string> reserved_names_;
  std::vector<NumberColumn> reserved_columns_;
  std::uint64_t graphs_;
  RowCursor rows_;
};

// One graph's arrays, reused from graph to graph.
struct GraphArrays {
  std::vector<float> x;
  std::vector<std::int64_t> edges;
  std::vector<float> edge_attr;
  std::vector<float> positions;
  std::vector<std::int64_t> parents;
};

// Where nodes.parquet keeps positions and parents, as indices into its reserved columns.
struct NodeGeometry {
  std::uint32_t dimensions = 0;  // 0: no positions
  std::array<std::size_t, 3> position_columns{};
  std::optional<std::size_t> parent_column;
};

// The geometry columns of nodes.parquet, checked: pos_x and pos_y (and pos_z for 3-D) or none, no
// other pos_* column, a parent column only beside positions; positions present when `required`.
NodeGeometry node_geometry(GroupedRows& nodes, bool required) {
  NodeGeometry geometry;
  std::array<bool, 3> present{};
  const auto& names = nodes.reserved_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == kParentColumn) {
      geometry.parent_column = i;
      continue;
    }
    const auto axis = std::find(kPositionColumns.begin(), kPositionColumns.end(), names[i]);
    if (axis == kPositionColumns.end())
      throw util::InputError(nodes.path(), 0, names[i],
                             "pos_* columns are node positions: pos_x, pos_y and, for 3-D, pos_z "
                             "(rename a feature that is no coordinate)");
    const auto d = static_cast<std::size_t>(axis - kPositionColumns.begin());
    present[d] = true;
    geometry.position_columns[d] = i;
  }
  if (present[0] != present[1] || (present[2] && !present[0]))
    throw util::InputError(nodes.path(), 0, present[0] ? "pos_x" : (present[1] ? "pos_y" : "pos_z"),
                           "positions need pos_x and pos_y (and pos_z for 3-D); the table has "
                           "only some of them");
  geometry.dimensions = present[0] ? (present[2] ? 3 : 2) : 0;
  if (geometry.parent_column && geometry.dimensions == 0)
    throw util::InputError(nodes.path(), 0, kParentColumn,
                           "a tree's parents are stored with its positions: add pos_x and pos_y "
                           "(and pos_z)");
  if (required && geometry.dimensions == 0)
    throw util::InputError(nodes.path(), 0, "pos_x",
                           "--geometric needs node positions, columns pos_x and pos_y (and pos_z "
                           "for 3-D); the table has none");
  return geometry;
}

// The current node row's position and parent into `arrays`.
void read_node_geometry(GroupedRows& nodes, const NodeGeometry& geometry, GraphArrays& arrays) {
  for (std::uint32_t d = 0; d < geometry.dimensions; ++d) {
    const std::size_t column = geometry.position_columns[d];
    const auto value = nodes.reserved(column);
    const auto narrowed = static_cast<float>(value.value_or(NAN));
    if (!value || !std::isfinite(narrowed))
      nodes.fail(kPositionColumns[d],
                 value ? fmt::format("position {} is not a finite 32-bit float", *value)
                       : std::string("position is null"));
    arrays.positions.push_back(narrowed);
  }
  if (!geometry.parent_column) return;
  // A root's parent is -1 or null; the others are the graph's node numbers (checked per graph).
  const double parent = nodes.reserved(*geometry.parent_column).value_or(-1.0);
  if (parent != std::floor(parent) || parent < -1.0 || parent > 4294967295.0)
    nodes.fail(kParentColumn,
               fmt::format("parent {} is not a node number (or -1 for a root)", parent));
  arrays.parents.push_back(static_cast<std::int64_t>(parent));
}

// Reads graph `graph`'s nodes into `arrays` and returns how many there are. A bad parent is
// refused at its node's row.
std::uint64_t read_nodes(GroupedRows& nodes, std::uint64_t graph, std::uint32_t identity_classes,
                         const NodeGeometry& geometry, GraphArrays& arrays) {
  std::vector<float>& x = arrays.x;
  x.clear();
  arrays.positions.clear();
  arrays.parents.clear();
  const std::uint64_t first_row = nodes.row_number();
  std::uint64_t count = 0;
  for (; nodes.in_graph(graph); nodes.advance(), ++count) {
    read_node_geometry(nodes, geometry, arrays);
    if (identity_classes == 0) x.push_back(0.0F);
    for (std::uint32_t f = 0; f < nodes.features(); ++f) x.push_back(nodes.feature(f));
    if (identity_classes > 0) {
      const float identity = x[x.size() - nodes.features()];
      if (identity != std::floor(identity) || identity < 0.0F ||
          identity >= static_cast<float>(identity_classes)) {
        nodes.fail(nodes.feature_name(0),
                   fmt::format("the node's class (its first feature column) is {}, not a whole "
                               "number in [0, {}) (--identity-classes)",
                               identity, identity_classes));
      }
    }
  }
  if (geometry.parent_column) {
    if (const auto problem = store::find_parent_problem(arrays.parents))
      throw util::InputError(
          nodes.path(), first_row + problem->node, kParentColumn,
          fmt::format("graph {} node {}: {}", graph, problem->node, problem->reason));
  }
  return count;
}

// Reads graph `graph`'s edges, checking their endpoints against its `node_count` nodes.
std::uint64_t read_edges(GroupedRows& edges, std::uint64_t graph, std::uint64_t node_count,
                         GraphArrays& arrays) {
  arrays.edges.clear();
  arrays.edge_attr.clear();
  std::uint64_t count = 0;
  for (; edges.in_graph(graph); edges.advance(), ++count) {
    for (std::size_t end = 1; end <= 2; ++end) {
      const std::uint64_t node = edges.key(end);
      if (node >= node_count) {
        edges.fail(end == 1 ? "source" : "target",
                   fmt::format("node {} is outside graph {}, which has {} nodes", node, graph,
                               node_count));
      }
      arrays.edges.push_back(static_cast<std::int64_t>(node));
    }
    for (std::uint32_t f = 0; f < edges.features(); ++f)
      arrays.edge_attr.push_back(edges.feature(f));
  }
  return count;
}

}  // namespace

ImportSummary import_graph_tables(const std::filesystem::path& directory,
                                  const std::filesystem::path& store,
                                  const ImportOptions& options) {
  GraphRows graph_rows(directory / kGraphsFile, options.batch_rows);
  const std::uint64_t graph_count = graph_rows.count();
  GroupedRows nodes(directory / kNodesFile, options.batch_rows, {"graph"}, graph_count,
                    is_geometry_column);
  const NodeGeometry geometry = node_geometry(nodes, options.require_positions);
  GroupedRows edges(directory / kEdgesFile, options.batch_rows, {"graph", "source", "target"},
                    graph_count);
  if (options.identity_classes > 0 && nodes.features() == 0) {
    throw util::InputError(nodes.path(), 0, "",
                           "--identity-classes reads each node's class from the first node "
                           "feature column, and the table has none besides graph");
  }

  ImportSummary summary;
  summary.node_features = nodes.features() + (options.identity_classes == 0 ? 1 : 0);
  summary.edge_features = edges.features();
  store::GraphDatasetWriter writer(
      store, {.node_features = summary.node_features,
              .edge_features = summary.edge_features,
              .identity_classes = std::max<std::uint32_t>(options.identity_classes, 1),
              .validation_fraction = options.validation_fraction,
              .seed = options.seed,
              .overwrite = options.overwrite,
              .created_by = options.created_by,
              .position_dimensions = geometry.dimensions,
              .has_parents = geometry.parent_column.has_value(),
              .target_name = {},
              .target_unit = {}});

  GraphArrays arrays;
  for (std::uint64_t graph = 0; graph < graph_count; ++graph) {
    const auto [label, split] = graph_rows.next();
    const std::uint64_t node_count =
        read_nodes(nodes, graph, options.identity_classes, geometry, arrays);
    if (node_count == 0) nodes.no_nodes(graph);
    summary.nodes += node_count;
    summary.edges += read_edges(edges, graph, node_count, arrays);
    try {
      writer.append({arrays.x, arrays.edges, arrays.edge_attr, label, split},
                    {arrays.positions, arrays.parents, 0.0});
    } catch (const std::invalid_argument& e) {  // what only the whole graph tells: its paths
      throw util::InputError(directory / kGraphsFile, graph + 1, "", e.what());
    }
    if (split == store::DatasetSplit::kTest) ++summary.test_graphs;
    ++summary.graphs;
    if (options.progress && summary.graphs % kProgressEvery == 0)
      options.progress(summary.graphs, graph_count);
  }
  nodes.expect_end();
  edges.expect_end();
  writer.commit();
  if (options.progress) options.progress(summary.graphs, graph_count);
  return summary;
}

}  // namespace headroom::graph_tables
