// Temporary: subcommands not yet implemented. Each file in src/cli/ replaces one of these.
#include <CLI/CLI.hpp>

#include "headroom/cli/commands.hpp"

namespace headroom::cli {
void add_generate_command(CLI::App& app) { app.add_subcommand("generate", "not yet"); }
void add_preprocess_command(CLI::App& app) { app.add_subcommand("preprocess", "not yet"); }
void add_inspect_command(CLI::App& app) { app.add_subcommand("inspect", "not yet"); }
void add_run_command(CLI::App& app) { app.add_subcommand("run", "not yet"); }
}  // namespace headroom::cli
