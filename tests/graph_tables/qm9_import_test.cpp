// QM9 into a geometric store (graph_tables/import_qm9.hpp): the facts of the shared file
// (../shared/data/README.md) read back from the store, the cutoff's edges against distances
// computed here, the fixed split honoured; bad molecules refused by file, row and column with
// nothing written (small files written here with pyarrow).
#include "headroom/graph_tables/import_qm9.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "headroom/store/graph_store.hpp"
#include "headroom/util/input_error.hpp"
#include "test_support.hpp"

namespace headroom::graph_tables {
namespace {

namespace fs = std::filesystem;

fs::path shared_molecules() { return testing::shared_data_dir() / "qm9" / "molecules.parquet"; }

TEST(Qm9Import, TheWholeFileHasTheFactsItsReadmeStates) {
  HEADROOM_REQUIRE_SHARED_DATA();
  if (!fs::exists(shared_molecules())) GTEST_SKIP() << shared_molecules() << " is absent";
  testing::TempDir dir;
  const Qm9Summary summary = import_qm9(shared_molecules(), dir / "qm9", {});
  EXPECT_EQ(summary.molecules, 130'831U);
  EXPECT_EQ(summary.train, 110'000U);
  EXPECT_EQ(summary.validation, 10'000U);
  EXPECT_EQ(summary.test, 10'831U);
  const auto store = store::GraphStore::open(dir / "qm9");
  ASSERT_EQ(store.num_graphs(), 130'831U);
  EXPECT_EQ(store.validation_ids().size(), 10'000U);
  EXPECT_EQ(store.test_ids().size(), 10'831U);
  EXPECT_EQ(store.train_ids().size(), 110'000U);
  const auto index = store.size_index();
  std::uint32_t fewest = UINT32_MAX, most = 0;
  double atoms = 0, gaps = 0;
  for (std::size_t g = 0; g < store.num_graphs(); ++g) {
    fewest = std::min(fewest, index.num_nodes[g]);
    most = std::max(most, index.num_nodes[g]);
    atoms += index.num_nodes[g];
    gaps += index.target[g];
  }
  EXPECT_EQ(fewest, 3U);
  EXPECT_EQ(most, 29U);
  EXPECT_NEAR(atoms / 130'831, 18.03, 0.005);
  EXPECT_NEAR(gaps / 130'831, 0.2520, 0.00005);
  EXPECT_EQ(summary.disconnected, 1U);  // at the default 1.7 Å (import_qm9.hpp)
}

// Molecule 1, methane, among the file's first ten: C and four H 1.09 Å from it, 1.78 Å apart.
TEST(Qm9Import, MethaneIsFiveAtomsWithItsGapAndItsBondsWithinTheCutoff) {
  HEADROOM_REQUIRE_SHARED_DATA();
  if (!fs::exists(shared_molecules())) GTEST_SKIP() << shared_molecules() << " is absent";
  testing::TempDir dir;
  const Qm9Summary summary = import_qm9(shared_molecules(), dir / "qm9", {.limit = 10});
  EXPECT_EQ(summary.molecules, 10U);
  const auto store = store::GraphStore::open(dir / "qm9", store::StoreVerification::kFull);
  int methanes = 0;
  for (std::size_t g = 0; g < store.num_graphs(); ++g) {
    const auto view = store.graph(g);
    if (view.num_nodes() != 5) continue;
    ++methanes;
    EXPECT_NEAR(store.size_index().target[g], 0.5048, 0.00005);
    // carbon first: class 1, one-hot C, atomic number 6; then hydrogens
    EXPECT_EQ(view.node_features[0], 1.0F);
    EXPECT_EQ(view.node_features[2], 1.0F);
    EXPECT_EQ(view.node_features[6], 6.0F);
    for (std::size_t h = 1; h < 5; ++h) EXPECT_EQ(view.node_features[h * kQm9NodeFeatures], 0.0F);
    // Only the four C-H bonds are within 1.7 Å, both ways.
    EXPECT_EQ(view.num_edges(), 8U);
    for (std::size_t e = 0; e < view.num_edges(); ++e) {
      const auto a = static_cast<std::size_t>(view.edge_index[2 * e]);
      const auto b = static_cast<std::size_t>(view.edge_index[2 * e + 1]);
      double squared = 0;
      for (int d = 0; d < 3; ++d)
        squared += std::pow(view.positions[3 * a + d] - view.positions[3 * b + d], 2);
      EXPECT_NEAR(std::sqrt(squared), 1.09, 0.01);
    }
  }
  EXPECT_EQ(methanes, 1);
  // A wider cutoff also links the hydrogens: a complete graph of 5 atoms.
  import_qm9(shared_molecules(), dir / "wide", {.cutoff_angstrom = 2.0, .limit = 10});
  const auto wide = store::GraphStore::open(dir / "wide");
  for (std::size_t g = 0; g < wide.num_graphs(); ++g) {
    if (wide.graph(g).num_nodes() == 5) {
      EXPECT_EQ(wide.graph(g).num_edges(), 20U);
    }
  }
}

// Writes molecules.parquet into `dir` from Python literals (a list of rows).
fs::path write_molecules(const testing::TempDir& dir, const std::string& rows) {
  const auto script = dir / "write.py";
  testing::write_text_file(
      script,
      fmt::format("import pyarrow as pa, pyarrow.parquet as pq\n"
                  "rows = {}\n"
                  "pq.write_table(pa.table({{\n"
                  "  'atomic_numbers': pa.array([r[0] for r in rows], pa.list_(pa.uint8())),\n"
                  "  'positions_angstrom': pa.array([r[1] for r in rows], "
                  "pa.list_(pa.float32())),\n"
                  "  'gap_hartree': pa.array([r[2] for r in rows], pa.float64()),\n"
                  "  'split': pa.array([r[3] for r in rows], pa.string())}}), '{}')\n",
                  rows, (dir / "molecules.parquet").string()));
  std::string output;
  EXPECT_EQ(testing::run_command(fmt::format("'{}' '{}' 2>&1", HEADROOM_PYTHON, script.string()),
                                 &output),
            0)
      << output;
  return dir / "molecules.parquet";
}

// Water and a bad molecule in row 2; the refusal names the row and column, nothing is written.
void expect_refused(const std::string& bad_row, const std::string& column,
                    const std::string& reason) {
  testing::TempDir dir;
  const std::string water = "([8, 1, 1], [0,0,0, 0.96,0,0, -0.24,0.93,0], 0.3, 'train')";
  const auto file = write_molecules(dir, "[" + water + ", " + bad_row + "]");
  try {
    import_qm9(file, dir / "store", {});
    ADD_FAILURE() << "accepted: " << bad_row;
  } catch (const util::InputError& e) {
    EXPECT_EQ(e.file(), file);
    EXPECT_EQ(e.line(), 2U) << e.what();
    EXPECT_EQ(e.column(), column) << e.what();
    EXPECT_EQ(e.reason(), reason) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "store"));
  for (const auto& entry : fs::directory_iterator(dir.path()))
    EXPECT_TRUE(entry.path().filename() == "write.py" ||
                entry.path().filename() == "molecules.parquet")
        << entry.path();
}

TEST(Qm9Import, BadMoleculesAreRefusedByRowAndColumnWithNothingWritten) {
  expect_refused("([6, 1], [0,0,0, float('nan'),0,0], 0.3, 'train')", "positions_angstrom",
                 "atom 1 coordinate x is nan, not a finite number");
  expect_refused("([6, 1], [0,0,0, 1,0,float('inf')], 0.3, 'train')", "positions_angstrom",
                 "atom 1 coordinate z is inf, not a finite number");
  expect_refused("([6, 1], [0,0,0, 1,0], 0.3, 'train')", "positions_angstrom",
                 "5 coordinates for 2 atoms: 3 per atom (x y z)");
  expect_refused("([6, 17], [0,0,0, 1,0,0], 0.3, 'train')", "atomic_numbers",
                 "atom 1 has atomic number 17, not H, C, N, O or F (1, 6, 7, 8, 9)");
  expect_refused("([], [], 0.3, 'train')", "atomic_numbers", "the molecule has no atoms");
  expect_refused("([6], [0,0,0], float('nan'), 'train')", "gap_hartree", "gap nan is not finite");
  expect_refused("([6], [0,0,0], 0.3, 'holdout')", "split",
                 "split 'holdout' is none of train, valid, test");
}

TEST(Qm9Import, AFileWithoutPositionsIsRefusedNamingTheColumn) {
  testing::TempDir dir;
  const auto script = dir / "write.py";
  testing::write_text_file(
      script, fmt::format("import pyarrow as pa, pyarrow.parquet as pq\n"
                          "pq.write_table(pa.table({{'atomic_numbers': pa.array([[6]], "
                          "pa.list_(pa.uint8())), 'gap_hartree': [0.3], 'split': ['train']}}), "
                          "'{}')\n",
                          (dir / "molecules.parquet").string()));
  ASSERT_EQ(testing::run_command(fmt::format("'{}' '{}'", HEADROOM_PYTHON, script.string())), 0);
  try {
    import_qm9(dir / "molecules.parquet", dir / "store", {});
    FAIL() << "a file without positions was imported";
  } catch (const util::InputError& e) {
    EXPECT_EQ(e.column(), "positions_angstrom");
    EXPECT_NE(std::string(e.what()).find("column missing"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "store"));
}

}  // namespace
}  // namespace headroom::graph_tables
