#include <CLI/CLI.hpp>
#include <string>

#include "headroom/cli/commands.hpp"
#include "headroom/cli/config_file.hpp"
#include "headroom/cli/flag_values.hpp"

namespace headroom::cli {

void configure_app_with_data_commands(CLI::App& app) {
  app.name("headroom");
  app.set_version_flag("--version", std::string("headroom ") + HEADROOM_VERSION);
  app.require_subcommand(1);
  // Every flag of a subcommand can also come from a TOML file: a [preprocess] section for
  // `headroom preprocess`, and so on. Flags on the command line win.
  add_config_file_option(app);  // strict: a bad file is an error, never a run with defaults
  app.fallthrough();            // so --config may follow the subcommand
  add_generate_command(app);
  add_generate_trees_command(app);
  add_preprocess_command(app);
  add_import_graphs_command(app);
  add_import_qm9_command(app);
  add_inspect_command(app);
  add_report_command(app);
  check_flag_values(app);
}

}  // namespace headroom::cli
