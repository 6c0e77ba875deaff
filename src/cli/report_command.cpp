#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <memory>
#include <optional>

#include "headroom/cli/commands.hpp"
#include "headroom/report/html_report.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::cli {

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
