#include "headroom/graph_tables/import_qm9.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "headroom/store/graph_dataset_writer.hpp"
#include "headroom/store/graph_paths.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/tabular/arrow_columns.hpp"
#include "headroom/tabular/parquet_table.hpp"
#include "headroom/util/input_error.hpp"

namespace headroom::graph_tables {
namespace {

using tabular::IntegerColumn;
using tabular::NumberColumn;
using tabular::StringColumn;

constexpr const char* kAtoms = "atomic_numbers";
constexpr const char* kPositions = "positions_angstrom";
constexpr const char* kGap = "gap_hartree";
constexpr const char* kSplit = "split";
constexpr std::array<std::uint8_t, 5> kElements = {1, 6, 7, 8, 9};  // H, C, N, O, F
constexpr std::uint64_t kProgressEvery = 4096;

// One list column of a batch: row r's elements are values [offset(r), offset(r + 1)).
template <typename Values>
struct ListColumn {
  const arrow::ListArray* list = nullptr;
  Values values;

  void bind(const arrow::Array& array) {
    list = &static_cast<const arrow::ListArray&>(array);
    values.bind(*list->values());
  }
};

// One molecule's arrays, reused from molecule to molecule.
struct Molecule {
  std::vector<float> features;
  std::vector<float> positions;
  std::vector<std::int64_t> edges;
  std::vector<std::int64_t> no_parents;
  bool connected = true;
};

// The molecules of one batch, read row by row; every failure names the file, row and column.
class MoleculeRows {
 public:
  MoleculeRows(const std::filesystem::path& file, std::size_t batch_rows)
      : table_(file, "the QM9 molecules file", batch_rows) {
    table_.read_list_column(
        kAtoms, [](const arrow::DataType& t) { return IntegerColumn::accepts(t, false); },
        "a list of integers (atomic numbers)");
    table_.read_list_column(
        kPositions, [](const arrow::DataType& t) { return NumberColumn::accepts(t, false); },
        "a list of numbers (x y z per atom, ångström)");
    table_.read_column(
        kGap, [](const arrow::DataType& t) { return NumberColumn::accepts(t, false); },
        "a number (hartree)");
    table_.read_column(
        kSplit, [](const arrow::DataType& t) { return StringColumn::accepts(t); },
        "string (train, valid or test)");
  }

  std::uint64_t count() const { return table_.num_rows(); }

  // The next molecule's row, or false after the last.
  bool next() {
    while (batch_ == nullptr || ++row_ == batch_->num_rows()) {
      batch_ = table_.next_batch();
      row_ = -1;
      if (batch_ == nullptr) return false;
      atoms_.bind(*batch_->GetColumnByName(kAtoms));
      positions_.bind(*batch_->GetColumnByName(kPositions));
      gap_.bind(*batch_->GetColumnByName(kGap));
      split_.bind(*batch_->GetColumnByName(kSplit));
    }
    return true;
  }

  [[noreturn]] void fail(const char* column, const std::string& reason) const {
    throw util::InputError(table_.path(), table_.rows_before_batch() + row_ + 1, column, reason);
  }

  store::DatasetSplit split() const {
    if (split_.is_null(row_)) fail(kSplit, "split is null");
    const std::string_view name = split_.value(row_);
    if (name == "train") return store::DatasetSplit::kTrain;
    if (name == "valid") return store::DatasetSplit::kValidation;
    if (name == "test") return store::DatasetSplit::kTest;
    fail(kSplit, fmt::format("split '{}' is none of train, valid, test", name));
  }

  double gap() const {
    if (gap_.is_null(row_)) fail(kGap, "gap is null");
    const double gap = gap_.value(row_);
    if (!std::isfinite(gap)) fail(kGap, fmt::format("gap {} is not finite", gap));
    return gap;
  }

  // The atoms' features and positions into `molecule`; returns the atom count.
  std::size_t read_atoms(Molecule& molecule) const {
    if (atoms_.list->IsNull(row_)) fail(kAtoms, "the list is null");
    if (positions_.list->IsNull(row_)) fail(kPositions, "the list is null");
    const std::int64_t first = atoms_.list->value_offset(row_);
    const auto atoms = static_cast<std::size_t>(atoms_.list->value_length(row_));
    if (atoms == 0) fail(kAtoms, "the molecule has no atoms");
    molecule.features.clear();
    for (std::size_t a = 0; a < atoms; ++a) {
      const auto at = first + static_cast<std::int64_t>(a);
      const std::int64_t number = atoms_.values.is_null(at) ? -1 : atoms_.values.value(at);
      const auto element = std::find(kElements.begin(), kElements.end(), number);
      if (element == kElements.end())
        fail(kAtoms, fmt::format("atom {} has atomic number {}, not H, C, N, O or F (1, 6, 7, 8, "
                                 "9)",
                                 a, number));
      const auto type = static_cast<std::size_t>(element - kElements.begin());
      molecule.features.push_back(static_cast<float>(type));
      for (std::size_t e = 0; e < kElements.size(); ++e)
        molecule.features.push_back(e == type ? 1.0F : 0.0F);
      molecule.features.push_back(static_cast<float>(number));
    }
    read_positions(atoms, molecule.positions);
    return atoms;
  }

 private:
  void read_positions(std::size_t atoms, std::vector<float>& positions) const {
    const std::int64_t first = positions_.list->value_offset(row_);
    const auto values = static_cast<std::size_t>(positions_.list->value_length(row_));
    if (values != 3 * atoms)
      fail(kPositions,
           fmt::format("{} coordinates for {} atoms: 3 per atom (x y z)", values, atoms));
    positions.clear();
    for (std::size_t k = 0; k < values; ++k) {
      const auto at = first + static_cast<std::int64_t>(k);
      const double value = positions_.values.is_null(at) ? NAN : positions_.values.value(at);
      if (!std::isfinite(static_cast<float>(value)))
        fail(kPositions, fmt::format("atom {} coordinate {} is {}, not a finite number", k / 3,
                                     "xyz"[k % 3], value));
      positions.push_back(static_cast<float>(value));
    }
  }

  tabular::ParquetTable table_;
  std::shared_ptr<arrow::RecordBatch> batch_;
  std::int64_t row_ = -1;
  ListColumn<IntegerColumn> atoms_;
  ListColumn<NumberColumn> positions_;
  NumberColumn gap_;
  StringColumn split_;
};

std::size_t root_of(std::vector<std::size_t>& parent, std::size_t v) {
  while (parent[v] != v) v = parent[v] = parent[parent[v]];
  return v;
}

// Edges both ways between atoms at most `cutoff` apart (distances in double from the stored
// floats), and whether they connect every atom.
void connect_within(double cutoff, std::size_t atoms, Molecule& molecule) {
  molecule.edges.clear();
  std::vector<std::size_t> parent(atoms);
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  std::size_t pieces = atoms;
  const float* p = molecule.positions.data();
  for (std::size_t i = 0; i < atoms; ++i)
    for (std::size_t j = i + 1; j < atoms; ++j) {
      const double dx = p[3 * i] - p[3 * j], dy = p[3 * i + 1] - p[3 * j + 1],
                   dz = p[3 * i + 2] - p[3 * j + 2];
      if (dx * dx + dy * dy + dz * dz > cutoff * cutoff) continue;
      const auto a = static_cast<std::int64_t>(i), b = static_cast<std::int64_t>(j);
      molecule.edges.insert(molecule.edges.end(), {a, b, b, a});
      const std::size_t ri = root_of(parent, i), rj = root_of(parent, j);
      if (ri != rj) {
        parent[ri] = rj;
        --pieces;
      }
    }
  molecule.connected = pieces == 1;
}

}  // namespace

Qm9Summary import_qm9(const std::filesystem::path& molecules, const std::filesystem::path& store,
                      const Qm9Options& options) {
  if (!(options.cutoff_angstrom > 0.0 && std::isfinite(options.cutoff_angstrom)))
    throw std::invalid_argument(
        fmt::format("--cutoff {} Å: a cutoff is a positive distance", options.cutoff_angstrom));
  MoleculeRows rows(molecules, options.batch_rows);
  const std::uint64_t total =
      options.limit > 0 ? std::min(options.limit, rows.count()) : rows.count();
  store::GraphDatasetWriter writer(store, {.node_features = kQm9NodeFeatures,
                                           .edge_features = 0,
                                           .identity_classes = kElements.size(),
                                           .validation_fraction = 0.0,
                                           .seed = 0,
                                           .overwrite = options.overwrite,
                                           .created_by = options.created_by,
                                           .position_dimensions = 3,
                                           .has_parents = false,
                                           .target_name = kGap,
                                           .target_unit = "hartree"});
  Qm9Summary summary;
  summary.min_atoms = UINT32_MAX;
  Molecule molecule;
  while (summary.molecules < total && rows.next()) {
    const auto split = rows.split();
    const double gap = rows.gap();
    const std::size_t atoms = rows.read_atoms(molecule);
    connect_within(options.cutoff_angstrom, atoms, molecule);
    writer.append({molecule.features, molecule.edges, {}, 0, split},
                  {molecule.positions, molecule.no_parents, gap});
    ++summary.molecules;
    summary.train += split == store::DatasetSplit::kTrain ? 1 : 0;
    summary.validation += split == store::DatasetSplit::kValidation ? 1 : 0;
    summary.test += split == store::DatasetSplit::kTest ? 1 : 0;
    summary.atoms += atoms;
    summary.edges += molecule.edges.size() / 2;
    summary.min_atoms = std::min(summary.min_atoms, static_cast<std::uint32_t>(atoms));
    summary.max_atoms = std::max(summary.max_atoms, static_cast<std::uint32_t>(atoms));
    summary.gap_sum_hartree += gap;
    summary.disconnected += molecule.connected ? 0 : 1;
    if (options.progress && summary.molecules % kProgressEvery == 0)
      options.progress(summary.molecules, total);
  }
  writer.commit();
  if (options.progress) options.progress(summary.molecules, total);
  const auto written = store::GraphStore::open(store);  // the mapping the spans view
  const auto paths = written.size_index().num_paths;
  for (std::size_t g = 0; g < summary.molecules; ++g) {
    const std::uint64_t third = paths[g * store::kPathOrders + 2];
    summary.max_third_order_paths = std::max(summary.max_third_order_paths, third);
    summary.third_order_paths += third;
  }
  return summary;
}

}  // namespace headroom::graph_tables
