// `headroom import-graphs DIR --out STORE`: graph tables (graph_tables/import_graph_tables.hpp)
// into a graph store that the training commands take like any other.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "headroom/cli/commands.hpp"
#include "headroom/cli/not_negative.hpp"
#include "headroom/graph_tables/import_graph_tables.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/progress_bar.hpp"

namespace headroom::cli {
namespace {

struct ImportGraphsArgs {
  std::string tables;
  std::string out;
  std::uint32_t identity_classes = 0;
  double validation_fraction = 0.2;
  std::uint64_t seed = 0;
  bool force = false;
  bool geometric = false;
};

void run_import_graphs(const ImportGraphsArgs& args) {
  const auto started = std::chrono::steady_clock::now();
  std::unique_ptr<util::ProgressBar> bar;
  std::uint64_t shown = 0;
  graph_tables::ImportOptions options{
      .identity_classes = args.identity_classes,
      .validation_fraction = args.validation_fraction,
      .seed = args.seed,
      .overwrite = args.force,
      .require_positions = args.geometric,
      .created_by = fmt::format("headroom {} import-graphs", HEADROOM_VERSION),
      .progress = [&](std::uint64_t done, std::uint64_t total) {
        if (bar == nullptr) bar = std::make_unique<util::ProgressBar>("import", total, "graphs");
        bar->advance(done - shown, done - shown);
        shown = done;
      }};
  const auto summary = graph_tables::import_graph_tables(args.tables, args.out, options);
  if (bar != nullptr) bar->finish();
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - started;
  fmt::print(
      "wrote {}: {} graphs ({} train, {} test), {} nodes, {} edges, {} node features (identity "
      "included), {} edge features, {:.2f} s\n",
      util::printable_path(args.out), summary.graphs, summary.graphs - summary.test_graphs,
      summary.test_graphs, summary.nodes, summary.edges, summary.node_features,
      summary.edge_features, elapsed.count());
}

}  // namespace

void add_import_graphs_command(CLI::App& app) {
  auto args = std::make_shared<ImportGraphsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "import-graphs",
      "Write a graph-classification dataset given as Parquet tables (graphs, nodes, edges) into "
      "a graph store that the training commands take");
  cmd->add_option("TABLES", args->tables,
                  "Directory holding graphs.parquet, nodes.parquet and edges.parquet "
                  "(docs/store-format.md, \"Graph tables\")")
      ->required();
  cmd->add_option("--out", args->out, "Graph store directory to create")->required();
  cmd->add_option("--identity-classes", args->identity_classes,
                  "0: every node one class (a zero column is put first); K: the first node "
                  "feature column holds each node's class, a whole number in [0, K)")
      ->capture_default_str()
      ->check(CLI::Range(0U, 1U << 24));
  cmd->add_option("--validation-fraction", args->validation_fraction,
                  "Fraction of the training graphs drawn (seeded) for validation")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.99));
  cmd->add_option("--seed", args->seed, "Seed of the validation draw")
      ->check(not_negative())
      ->capture_default_str();
  cmd->add_flag("--geometric", args->geometric,
                "Refuse a nodes.parquet without positions (pos_x, pos_y, optionally pos_z): the "
                "store is for a geometric encoder");
  cmd->add_flag("--force", args->force, "Replace --out if it is a graph store");
  cmd->footer("Example: headroom import-graphs tables/ --out stores/molecules");
  cmd->callback([args] { run_import_graphs(*args); });
}

}  // namespace headroom::cli
