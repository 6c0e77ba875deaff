#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <stdexcept>

#include "headroom/cli/commands.hpp"
#include "headroom/report/html_report.hpp"
#include "headroom/store/node_graph_metadata.hpp"
#include "headroom/store/store_error.hpp"
#include "headroom/store/store_metadata.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::cli {
namespace {

// A store holds only what headroom writes into it: a page written there (stores/D/page.html) is
// a foreign entry from then on, so --force and `headroom run` refuse to rebuild that store. The
// page may land anywhere but inside a store, at any depth, links resolved.
void require_outside_stores(const std::filesystem::path& out) {
  std::error_code ec;
  auto directory = std::filesystem::weakly_canonical(std::filesystem::absolute(out), ec);
  if (ec) directory = std::filesystem::absolute(out).lexically_normal();
  for (directory = directory.parent_path();; directory = directory.parent_path()) {
    bool is_store = false;
    if (std::filesystem::is_regular_file(directory / store::kManifestFileName, ec)) {
      try {
        store::store_kind_at(directory);
        is_store = true;
      } catch (const store::StoreError&) {
        // A manifest.json that is no store's: any web app has one.
      }
    }
    if (is_store)
      throw std::runtime_error(fmt::format(
          "{}: inside the graph store {}, which holds only what headroom writes into it; choose "
          "another --out",
          util::printable_path(out), util::printable_path(directory)));
    if (directory == directory.parent_path()) return;
  }
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto* command =
      app.add_subcommand("report", "Write a self-contained HTML report of a run root or stage");
  struct State {
    std::string path;
    std::string out;
    bool force = false;
  };
  auto state = std::make_shared<State>();
  command
      ->add_option("RUN_DIR", state->path,
                   "A run root (runs/<dataset>: every stage and the evaluation) or one stage's "
                   "run directory")
      ->required();
  command->add_option("--out", state->out, "The HTML file (default: RUN_DIR/report.html)");
  command->add_flag("--force", state->force,
                    "Replace an existing report (only a report headroom wrote; never an input)");
  command->footer(
      "Example: headroom report runs/synthetic\n"
      "         headroom report runs/synthetic/teacher_curriculum --out curriculum.html");
  command->callback([state] {
    // The default, RUN_DIR/report.html, is inside the run root, which is never a store's.
    if (!state->out.empty()) require_outside_stores(state->out);
    const auto written = report::write_html_report(
        state->path,
        state->out.empty() ? std::nullopt : std::optional<std::filesystem::path>(state->out),
        std::nullopt, state->force);
    fmt::print("report written to {}\n", util::printable_path(written.path));
    if (written.missing_chart_js)
      fmt::print(stderr, "warning: {}\n",
                 report::missing_charts_warning(*written.missing_chart_js));
  });
}

}  // namespace headroom::cli
