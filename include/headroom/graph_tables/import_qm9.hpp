// `headroom import-qm9`: the QM9 molecules (../shared/data/qm9/molecules.parquet, described in
// ../shared/data/README.md) written into a geometric graph store (docs/store-format.md,
// "Geometric stores"), the real 3-D geometry of the SGMP task (issue 48):
//   - atoms are nodes, in the file's order: feature 0 the element's class (H 0, C 1, N 2, O 3,
//     F 4; the identity a model embeds), then the one-hot of H, C, N, O, F, then the atomic
//     number; positions in ångström;
//   - an edge both ways between every two atoms at most `cutoff_angstrom` apart, no edge features;
//   - the HOMO-LUMO gap (`gap_hartree`, hartree) as the graph target, label 0 (regression);
//   - the file's fixed split honoured: train, valid (the store's validation split, as given) and
//     test.
// Read one record batch at a time: memory is a batch plus one molecule, whatever the file's size.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace headroom::graph_tables {

// The default cutoff: every covalent bond QM9 holds is shorter (C-C 1.54, C-O 1.43, N-N 1.45 Å),
// and the next distances, between two hydrogens on one carbon (1.78 Å), are longer. Measured on
// the full file: at 1.7 Å one molecule of 130,831 has atoms out of every other's reach (at
// 1.6 Å, 91), with 37.4 directed edges per molecule; 1.8 Å adds the H-H pairs (45.4 edges), each
// of which multiplies the 3rd-order paths an SGMP encoder enumerates.
inline constexpr double kDefaultQm9CutoffAngstrom = 1.7;
inline constexpr std::uint32_t kQm9NodeFeatures = 7;  // class, H, C, N, O, F one-hot, atomic number

struct Qm9Options {
  double cutoff_angstrom = kDefaultQm9CutoffAngstrom;  // > 0
  std::uint64_t limit = 0;  // > 0: only the file's first `limit` molecules (each in its split)
  bool overwrite = false;   // replace a graph store (never anything else)
  std::size_t batch_rows = 4096;
  std::string created_by{};  // recorded in the store's manifest
  // Called after every 4096 molecules and at the end with the molecules written and those to
  // write; may be empty.
  std::function<void(std::uint64_t done, std::uint64_t total)> progress{};
};

struct Qm9Summary {
  std::uint64_t molecules = 0;
  std::uint64_t train = 0;
  std::uint64_t validation = 0;
  std::uint64_t test = 0;
  std::uint64_t atoms = 0;
  std::uint64_t edges = 0;  // directed
  std::uint32_t min_atoms = 0;
  std::uint32_t max_atoms = 0;
  double gap_sum_hartree = 0.0;
  // Molecules whose cutoff graph falls apart in pieces (atoms that exchange no message).
  std::uint64_t disconnected = 0;
  std::uint64_t max_third_order_paths = 0;  // as the store's size index records them
  std::uint64_t third_order_paths = 0;      // all molecules together
};

// Writes the store at `store` atomically (nothing is left on failure). Throws util::InputError
// naming the file, the 1-based row and the column for bad input: a missing or mistyped column, a
// null, a molecule without atoms, an element other than H, C, N, O, F, positions that are not 3
// per atom or not finite, a gap that is not finite, a split other than train, valid or test.
// Throws std::invalid_argument for a cutoff that is not positive, and what
// store::GraphDatasetWriter throws for the store path.
Qm9Summary import_qm9(const std::filesystem::path& molecules, const std::filesystem::path& store,
                      const Qm9Options& options);

}  // namespace headroom::graph_tables
