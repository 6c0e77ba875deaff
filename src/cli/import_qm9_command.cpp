// `headroom import-qm9 MOLECULES --out STORE`: QM9 (graph_tables/import_qm9.hpp) into a geometric
// graph store with the HOMO-LUMO gap as each molecule's target.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "headroom/cli/commands.hpp"
#include "headroom/graph_tables/import_qm9.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/progress_bar.hpp"

namespace headroom::cli {
namespace {

struct ImportQm9Args {
  std::string molecules = "../shared/data/qm9/molecules.parquet";
  std::string out = "stores/qm9";
  graph_tables::Qm9Options options;
};

void run_import_qm9(ImportQm9Args& args) {
  const auto started = std::chrono::steady_clock::now();
  std::unique_ptr<util::ProgressBar> bar;
  std::uint64_t shown = 0;
  args.options.created_by = fmt::format("headroom {} import-qm9", HEADROOM_VERSION);
  args.options.progress = [&](std::uint64_t done, std::uint64_t total) {
    if (bar == nullptr) bar = std::make_unique<util::ProgressBar>("import", total, "molecules");
    bar->advance(done - shown, done - shown);
    shown = done;
  };
  const auto summary = graph_tables::import_qm9(args.molecules, args.out, args.options);
  if (bar != nullptr) bar->finish();
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - started;
  const auto molecules = static_cast<double>(summary.molecules);
  fmt::print(
      "wrote {}: {} molecules ({} train, {} validation, {} test), atoms {} to {} (mean {:.2f}), "
      "{} edges within {} Å ({} molecules in pieces), mean gap {:.4f} hartree, 3rd-order paths "
      "per molecule mean {:.0f} / max {}, {:.2f} s\n",
      util::printable_path(args.out), summary.molecules, summary.train, summary.validation,
      summary.test, summary.min_atoms, summary.max_atoms,
      static_cast<double>(summary.atoms) / molecules, summary.edges, args.options.cutoff_angstrom,
      summary.disconnected, summary.gap_sum_hartree / molecules,
      static_cast<double>(summary.third_order_paths) / molecules, summary.max_third_order_paths,
      elapsed.count());
}

}  // namespace

void add_import_qm9_command(CLI::App& app) {
  auto args = std::make_shared<ImportQm9Args>();
  CLI::App* cmd = app.add_subcommand(
      "import-qm9",
      "Write QM9's molecules (atoms, 3-D positions, the HOMO-LUMO gap, its fixed split) into a "
      "geometric graph store");
  cmd->add_option("MOLECULES", args->molecules, "QM9's molecules.parquet")->capture_default_str();
  cmd->add_option("--out", args->out, "Graph store directory to create")->capture_default_str();
  cmd->add_option("--cutoff", args->options.cutoff_angstrom,
                  "Edges between atoms at most this far apart, in ångström (the default holds "
                  "QM9's covalent bonds and not the 1.78 Å between hydrogens on one carbon)")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 100.0));
  cmd->add_option("--limit", args->options.limit,
                  "Only the file's first N molecules, each in its own split (0: all)")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1} << 40));
  cmd->add_flag("--force", args->options.overwrite, "Replace --out if it is a graph store");
  cmd->footer(
      "Example: headroom import-qm9 ../shared/data/qm9/molecules.parquet --limit 2000 "
      "--out stores/qm9-2k");
  cmd->callback([args] { run_import_qm9(*args); });
}

}  // namespace headroom::cli
